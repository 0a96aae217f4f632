import { Type } from '../../typebox.js';
import { ConfigError } from '../../config-error.js';
import { checkConfigJson } from '../../config-file.js';
import { FAMILIES } from '../../contract/families.js';
import { registerFactory } from '../factory.js';
import { BaseUrl, ModelsOption, PollSecondsOption, TimeBounds } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { entryProblem, ReplicateModels } from './models.js';
import { REPLICATE_DEFAULTS } from './defaults.js';

/** providers.json `type: replicate`: Replicate's predictions, each model's input mapping in `models`. */
export const replicateFactory = registerFactory({
  type: 'replicate',
  families: [...FAMILIES],
  optionsSchema: Type.Object(
    {
      baseUrl: BaseUrl(REPLICATE_DEFAULTS.baseUrl),
      ...TimeBounds,
      pollSeconds: PollSecondsOption,
      models: ModelsOption('an object of model name -> { model or version, output, input, constants? }'),
    },
    { additionalProperties: false },
  ),
  resolve(options, ctx) {
    const baseUrl = checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl ?? REPLICATE_DEFAULTS.baseUrl);
    if (!options.models || Object.keys(options.models).length === 0)
      throw new ConfigError(
        ctx.setting,
        `${ctx.where}.models is required for type replicate: an object of model name -> { model or version, output, input, constants? }`,
      );
    const models = checkConfigJson(ctx.setting, ReplicateModels, options.models, `${ctx.at}/models`);
    for (const [name, model] of Object.entries(models)) {
      const problem = entryProblem(model);
      if (problem) throw new ConfigError(ctx.setting, `${ctx.where}.models.${name} ${problem}`);
    }
    return { ...options, baseUrl, models };
  },
  checkRoute(options, route) {
    const mapped = route.upstreamModel ?? (route.model === '*' ? undefined : route.model);
    if (mapped !== undefined && !Object.hasOwn(options.models, mapped)) {
      throw new ConfigError(
        route.setting,
        `${route.where}: provider "${route.provider}" (type replicate) has no models entry "${mapped}" (it has ${Object.keys(options.models).join(', ')})`,
      );
    }
  },
  create: async (options, ctx) =>
    (await import('./provider.js')).createReplicateProvider({ ...options, id: ctx.id, apiKey: ctx.apiKey, concurrency: ctx.concurrency }),
});
