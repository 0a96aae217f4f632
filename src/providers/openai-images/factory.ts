import { Type } from '../../typebox.js';
import { ConfigError } from '../../config-error.js';
import { findModelCenterModel } from '../../contract/model-center-catalog.js';
import { registerFactory } from '../factory.js';
import { BaseUrl, TimeBounds } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { OPENAI_IMAGES_DEFAULTS } from './defaults.js';

/** providers.json `type: openai-images`: OpenAI's image generations and edits. */
export const openAiImagesFactory = registerFactory({
  type: 'openai-images',
  families: ['pic', 'model-center'],
  optionsSchema: Type.Object({ baseUrl: BaseUrl(OPENAI_IMAGES_DEFAULTS.baseUrl), ...TimeBounds }, { additionalProperties: false }),
  resolve: (options, ctx) => ({
    ...options,
    baseUrl: checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl ?? OPENAI_IMAGES_DEFAULTS.baseUrl),
  }),
  checkRoute(_options, route) {
    if (findModelCenterModel(route.model)?.kind === 'video') {
      throw new ConfigError(
        route.setting,
        `${route.where}: provider "${route.provider}" (type openai-images) makes images; ${route.model} is a Model Center video model`,
      );
    }
  },
  create: async (options, ctx) =>
    (await import('./provider.js')).createOpenAiImagesProvider({ ...options, id: ctx.id, apiKey: ctx.apiKey, concurrency: ctx.concurrency }),
});
