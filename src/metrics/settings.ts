/**
 * The settings of `/metrics` and tracing (G221, G225, G227), read with the rest of the
 * configuration at start.
 */
import { ConfigError, type Env } from '../config-error.js';

export interface MetricsSettings {
  /** `MEDIAGATE_METRICS_TOKEN`: the bearer token `/metrics` asks for. A secret: never logged. */
  token: string;
  /** `MEDIAGATE_METRICS_KEYS`: key ids whose requests get a `key` label of their own (the others: none). */
  keys: ReadonlySet<string>;
  /** `MEDIAGATE_METRICS_MODELS`: model names reported as themselves besides the catalog's and the routed ones (chat models). */
  models: readonly string[];
}

export interface ObservabilitySettings {
  /** Undefined: `/metrics` is off (absent: 404) and nothing is measured. */
  metrics: MetricsSettings | undefined;
  /** `MEDIAGATE_OTEL=on`: OpenTelemetry traces, exported by OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  tracing: boolean;
}

const KEY_ID = /^key_[A-Za-z0-9_-]{1,64}$/;
const MODEL = /^[\x21-\x7e]{1,100}$/;

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export function readObservability(env: Env): ObservabilitySettings {
  const token = env.MEDIAGATE_METRICS_TOKEN || undefined;
  if (token !== undefined && !/^[\x21-\x7e]{16,200}$/.test(token)) {
    throw new ConfigError('MEDIAGATE_METRICS_TOKEN', 'must be 16 to 200 printable characters without spaces');
  }
  const keys = list(env.MEDIAGATE_METRICS_KEYS);
  const badKey = keys.find((k) => !KEY_ID.test(k));
  if (badKey !== undefined) throw new ConfigError('MEDIAGATE_METRICS_KEYS', `must be key ids (key_...) separated by commas, got "${badKey}"`);
  if (keys.length > 100) throw new ConfigError('MEDIAGATE_METRICS_KEYS', `names at most 100 keys (each multiplies the request series), got ${keys.length}`);
  const models = list(env.MEDIAGATE_METRICS_MODELS);
  const badModel = models.find((m) => !MODEL.test(m));
  if (badModel !== undefined) throw new ConfigError('MEDIAGATE_METRICS_MODELS', `must be model names separated by commas, got "${badModel}"`);
  if (token === undefined && (keys.length > 0 || models.length > 0)) {
    throw new ConfigError(keys.length > 0 ? 'MEDIAGATE_METRICS_KEYS' : 'MEDIAGATE_METRICS_MODELS', 'needs MEDIAGATE_METRICS_TOKEN: /metrics is off without it');
  }
  const otel = (env.MEDIAGATE_OTEL ?? '').toLowerCase();
  if (!['', 'on', 'off', '1', '0', 'true', 'false'].includes(otel)) throw new ConfigError('MEDIAGATE_OTEL', `must be on or off, got "${env.MEDIAGATE_OTEL}"`);
  return {
    metrics: token === undefined ? undefined : { token, keys: new Set(keys), models },
    tracing: ['on', '1', 'true'].includes(otel),
  };
}
