import { Type } from '../../typebox.js';
import { ConfigError } from '../../config-error.js';
import { FAMILIES } from '../../contract/families.js';
import { registerFactory } from '../factory.js';
import { Milliseconds, PollSecondsOption, TimeBounds, Url } from '../toolkit/options.js';
import { checkUpstreamUrl } from '../toolkit/upstream-url.js';

/** providers.json `type: relay`: another gateway of this interface (G90). */
export const relayFactory = registerFactory({
  type: 'relay',
  families: [...FAMILIES, 'chat'],
  optionsSchema: Type.Object(
    {
      baseUrl: Url('an http(s) URL: {base_url} of the upstream'),
      powerBaseUrl: Url('an http(s) URL: {power_base_url} of the upstream (default baseUrl)'),
      apiBaseUrl: Url('an http(s) URL: {api_base_url} of the upstream (default baseUrl)'),
      ...TimeBounds,
      stallTimeoutMs: Milliseconds(),
      chatTimeoutMs: Milliseconds(),
      pollSeconds: PollSecondsOption,
    },
    { additionalProperties: false },
  ),
  resolve(options, ctx) {
    if (options.baseUrl === undefined) throw new ConfigError(ctx.setting, `${ctx.where}.baseUrl is required for type relay`);
    const url = (field: 'powerBaseUrl' | 'apiBaseUrl') =>
      options[field] !== undefined && { [field]: checkUpstreamUrl(ctx.setting, `${ctx.where}.${field}`, options[field]) };
    return { ...options, baseUrl: checkUpstreamUrl(ctx.setting, `${ctx.where}.baseUrl`, options.baseUrl), ...url('powerBaseUrl'), ...url('apiBaseUrl') };
  },
  create: async ({ stallTimeoutMs, ...options }, ctx) =>
    (await import('./provider.js')).createRelayProvider({
      ...options,
      id: ctx.id,
      apiKey: ctx.apiKey,
      concurrency: ctx.concurrency,
      chatStallTimeoutMs: stallTimeoutMs,
    }),
});
