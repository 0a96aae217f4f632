import { Type } from '../../typebox.js';
import { ConfigError } from '../../config-error.js';
import { checkConfigJson } from '../../config-file.js';
import { FAMILIES } from '../../contract/families.js';
import { kindOfModel } from '../../contract/model-family.js';
import { registerFactory } from '../factory.js';
import { BaseUrl, ModelsOption, PollSecondsOption, TimeBounds } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { builtInTemplates } from './builtin-templates.js';
import { COMFYUI_DEFAULTS } from './defaults.js';
import { ComfyModels, loadTemplates, type ComfyTemplate } from './templates.js';

/** providers.json `type: comfyui`: a ComfyUI server, its workflow templates in `models` (read relative to providers.json). */
export const comfyUiFactory = registerFactory({
  type: 'comfyui',
  families: [...FAMILIES],
  optionsSchema: Type.Object(
    {
      baseUrl: BaseUrl(COMFYUI_DEFAULTS.baseUrl),
      ...TimeBounds,
      pollSeconds: PollSecondsOption,
      models: ModelsOption('an object of template name -> { workflow, makes, slots, outputs? }'),
    },
    { additionalProperties: false },
  ),
  resolve(options, ctx) {
    const baseUrl = checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl ?? COMFYUI_DEFAULTS.baseUrl);
    let models: Record<string, ComfyTemplate> = {};
    if (options.models !== undefined) {
      const specs = checkConfigJson(ctx.setting, ComfyModels, options.models, `${ctx.at}/models`);
      try {
        models = loadTemplates(specs, ctx.baseDir);
      } catch (err) {
        throw new ConfigError(ctx.setting, `${ctx.where}.models.${(err as Error).message}`);
      }
    }
    return { ...options, baseUrl, models };
  },
  /** A route names one of its templates (or a built-in one), of the kind the model makes. */
  checkRoute(options, route) {
    const templates: Record<string, ComfyTemplate> = { ...builtInTemplates(), ...options.models };
    const names = Object.keys(templates);
    const name = route.upstreamModel;
    if (name !== undefined && !names.includes(name)) {
      throw new ConfigError(
        route.setting,
        `${route.where}: provider "${route.provider}" (type comfyui) has no template "${name}" (it has ${names.join(', ')}; add one under providers.${route.provider}.models)`,
      );
    }
    const kind = route.model === '*' ? undefined : kindOfModel(route.model);
    const makes = name !== undefined ? templates[name]!.makes : kind;
    if (kind !== undefined && makes !== kind) {
      throw new ConfigError(
        route.setting,
        `${route.where}: the ComfyUI template "${name}" of provider "${route.provider}" makes ${makes === 'image' ? 'images' : 'videos'}; ${route.model} makes ${kind === 'image' ? 'images' : 'videos'}`,
      );
    }
  },
  create: async ({ models, ...options }, ctx) =>
    (await import('./provider.js')).createComfyUiProvider({ ...options, templates: models, id: ctx.id, apiKey: ctx.apiKey, concurrency: ctx.concurrency }),
});
