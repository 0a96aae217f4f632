import { Type } from '../../typebox.js';
import { registerFactory } from '../factory.js';
import { BaseUrl, PollSecondsOption, TimeBounds } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { GEMINI_DEFAULTS } from './defaults.js';

/** providers.json `type: gemini`: Google's Gemini API (images, Veo videos). */
export const geminiFactory = registerFactory({
  type: 'gemini',
  families: ['pic', 'clip', 'model-center'],
  optionsSchema: Type.Object({ baseUrl: BaseUrl(GEMINI_DEFAULTS.baseUrl), ...TimeBounds, pollSeconds: PollSecondsOption }, { additionalProperties: false }),
  resolve: (options, ctx) => ({ ...options, baseUrl: checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl ?? GEMINI_DEFAULTS.baseUrl) }),
  create: async (options, ctx) =>
    (await import('./provider.js')).createGeminiProvider({ ...options, id: ctx.id, apiKey: ctx.apiKey, concurrency: ctx.concurrency }),
});
