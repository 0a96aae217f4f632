import { readChatUpstreamSpecs, type ChatUpstreamSpec } from './chat/upstream-config.js';
import type { Env } from './config-error.js';
import { readProvidersFile, type ProvidersConfig } from './providers/providers-file.js';
import { loadSettingsConfig, type SettingsConfig } from './settings-config.js';

export { defaultMaxConnections, isPostgresUrl } from './settings/values.js';
export type { CreditsSettings, S3Settings, SandboxTiming, SettingsConfig, WebhookSettings } from './settings-config.js';

/**
 * The configuration of one gateway process, built once at start: the settings
 * (settings-config.ts, from the settings table, G290) and the files that configure upstreams,
 * read by their own modules (the chat upstreams, providers.json). A bad value stops the start with
 * a ConfigError naming the setting.
 */
export interface Config extends SettingsConfig {
  /** OpenAI-compatible chat upstreams (`MEDIAGATE_CHAT_CONFIG`, `MEDIAGATE_CHAT_UPSTREAM_*`), validated; keys inside. */
  chatUpstreams: ChatUpstreamSpec[];
  /** Providers and routes of `MEDIAGATE_PROVIDERS` (providers.json), validated; keys inside. Undefined: the shorthand settings apply. */
  providers: ProvidersConfig | undefined;
}

/** Reads and validates every setting and upstream file once; a bad value throws a ConfigError naming it. */
export function loadConfig(env: Env = process.env): Config {
  return { ...loadSettingsConfig(env), chatUpstreams: readChatUpstreamSpecs(env), providers: readProvidersFile(env) };
}
