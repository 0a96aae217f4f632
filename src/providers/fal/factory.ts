import { Type } from '../../typebox.js';
import { ConfigError } from '../../config-error.js';
import { checkConfigJson } from '../../config-file.js';
import { FAMILIES } from '../../contract/families.js';
import { registerFactory } from '../factory.js';
import { BaseUrl, ModelsOption, PollSecondsOption, TimeBounds, Url } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { FalModels } from './models.js';
import { FAL_DEFAULTS } from './defaults.js';

/** providers.json `type: fal`: fal.ai's queue, each model's input mapping in `models`. */
export const falFactory = registerFactory({
  type: 'fal',
  families: [...FAMILIES],
  optionsSchema: Type.Object(
    {
      baseUrl: BaseUrl(FAL_DEFAULTS.baseUrl),
      ...TimeBounds,
      pollSeconds: PollSecondsOption,
      models: ModelsOption('an object of fal model id -> its input mapping { inputs, output, ... }'),
      jwksUrl: Url(`an http(s) URL: where fal publishes the keys of its webhook signatures (default ${FAL_DEFAULTS.jwksUrl})`),
    },
    { additionalProperties: false },
  ),
  resolve(options, ctx) {
    const check = (field: string, url: string) => checkUpstreamUrl(ctx.setting, `${ctx.where}.${field}`, url);
    return {
      ...options,
      baseUrl: check('baseUrl', options.baseUrl ?? FAL_DEFAULTS.baseUrl),
      models: options.models === undefined ? {} : checkConfigJson(ctx.setting, FalModels, options.models, `${ctx.at}/models`),
      ...(options.jwksUrl !== undefined && { jwksUrl: check('jwksUrl', options.jwksUrl) }),
    };
  },
  checkRoute(options, route) {
    const name = route.upstreamModel ?? route.model;
    if (route.model !== '*' && !Object.hasOwn(options.models, name)) {
      throw new ConfigError(
        route.setting,
        `${route.where}: provider "${route.provider}" (type fal) has no entry in its "models" for ${JSON.stringify(name)} (give the fal model id as the candidate's "model" and its input mapping under providers.${route.provider}.models)`,
      );
    }
  },
  create: async (options, ctx) =>
    (await import('./provider.js')).createFalProvider({ ...options, id: ctx.id, apiKey: ctx.apiKey, concurrency: ctx.concurrency }),
});
