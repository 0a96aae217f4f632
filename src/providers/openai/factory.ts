import { Type } from '../../typebox.js';
import { CHAT_UPSTREAM_DEFAULTS } from '../../chat/upstream-config.js';
import { ConfigError } from '../../config-error.js';
import { chatOnlyProvider } from '../registry.js';
import { registerFactory } from '../factory.js';
import { Milliseconds, TimeBounds, Url } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';
import { createOpenAiChatProvider } from './chat.js';

/** providers.json `type: openai-chat`: an OpenAI-compatible chat completions API. */
export const openAiChatFactory = registerFactory({
  type: 'openai-chat',
  families: ['chat'],
  optionsSchema: Type.Object(
    {
      baseUrl: Url('an http(s) URL, up to the API version (https://api.openai.com/v1 for OpenAI)'),
      ...TimeBounds,
      stallTimeoutMs: Milliseconds(),
      maxTokensParam: Type.Optional(
        Type.Union([Type.Literal('max_completion_tokens'), Type.Literal('max_tokens'), Type.Literal('both')], {
          description: 'one of max_completion_tokens, max_tokens, both',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  resolve(options, ctx) {
    if (options.baseUrl === undefined) throw new ConfigError(ctx.setting, `${ctx.where}.baseUrl is required for type openai-chat`);
    if (options.stallTimeoutMs !== undefined && options.timeoutMs !== undefined && options.stallTimeoutMs > options.timeoutMs) {
      throw new ConfigError(ctx.setting, `${ctx.where}.stallTimeoutMs (${options.stallTimeoutMs}) must not exceed timeoutMs (${options.timeoutMs})`);
    }
    return { ...options, baseUrl: checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl) };
  },
  create(options, ctx) {
    const timeoutMs = options.timeoutMs ?? CHAT_UPSTREAM_DEFAULTS.timeoutMs;
    const chat = createOpenAiChatProvider({
      id: ctx.id,
      baseUrl: options.baseUrl,
      apiKey: ctx.apiKey,
      timeoutMs,
      keySetting: ctx.keySetting,
      stallTimeoutMs: options.stallTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.stallTimeoutMs, timeoutMs),
      connectTimeoutMs: options.connectTimeoutMs ?? Math.min(CHAT_UPSTREAM_DEFAULTS.connectTimeoutMs, timeoutMs),
      maxTokensParam: options.maxTokensParam,
    });
    return { ...chatOnlyProvider(chat), concurrency: ctx.concurrency };
  },
});
