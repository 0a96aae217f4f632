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
  /** `MEDIAGATE_OTEL=on`: OpenTelemetry traces, exported by OTLP/HTTP; undefined: off. */
  tracing: TracingSettings | undefined;
}

/** Where spans go, from the standard OpenTelemetry variables (read here, with the rest of the settings). */
export interface TracingSettings {
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else `http://localhost:4318/v1/traces`. */
  url: string;
  /** `OTEL_EXPORTER_OTLP_TRACES_HEADERS` or `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values URL-encoded). May hold credentials: never logged. */
  headers: Record<string, string>;
  /** `OTEL_SERVICE_NAME` (default `mediagate`). */
  serviceName: string;
}

const KEY_ID = /^key_[A-Za-z0-9_-]{1,64}$/;
const MODEL = /^[\x21-\x7e]{1,100}$/;

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
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
    tracing: ['on', '1', 'true'].includes(otel) ? tracingSettings(env) : undefined,
  };
}

function tracingSettings(env: Env): TracingSettings {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  const name = traces !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const url = traces ?? (base !== undefined ? `${base.replace(/\/+$/, '')}/v1/traces` : 'http://localhost:4318/v1/traces');
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(name, 'must be an absolute http(s) URL (OTLP/HTTP)');
  }
  const headersName = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS';
  const headers: Record<string, string> = {};
  for (const pair of list(env[headersName])) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(headersName, 'must be name=value pairs separated by commas');
    try {
      headers[pair.slice(0, at).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(headersName, `the value of ${pair.slice(0, at).trim()} is not valid URL encoding`);
    }
  }
  return { url, headers, serviceName: env.OTEL_SERVICE_NAME || 'mediagate' };
}
