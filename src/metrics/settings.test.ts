import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config-error.js';
import { readObservability } from './settings.js';

const TOKEN = 'a-metrics-token-0123';

describe('metrics and tracing settings', () => {
  it('off by default', () => {
    expect(readObservability({})).toEqual({ metrics: undefined, tracing: undefined });
    // the standard variables alone do not turn tracing on
    expect(readObservability({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBeUndefined();
  });

  it('a token turns /metrics on, with the listed keys and models', () => {
    const s = readObservability({
      MEDIAGATE_METRICS_TOKEN: TOKEN,
      MEDIAGATE_METRICS_KEYS: 'key_abc, key_def',
      MEDIAGATE_METRICS_MODELS: 'llama-3,qwen',
      MEDIAGATE_OTEL: 'on',
    });
    expect(s.metrics?.token).toBe(TOKEN);
    expect([...s.metrics!.keys]).toEqual(['key_abc', 'key_def']);
    expect(s.metrics?.models).toEqual(['llama-3', 'qwen']);
    expect(s.tracing).toEqual({ url: 'http://localhost:4318/v1/traces', headers: {}, serviceName: 'mediagate' });
  });

  it('tracing goes where the standard OTLP variables say', () => {
    const on = { MEDIAGATE_OTEL: 'on' };
    expect(
      readObservability({
        ...on,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D, tenant=t1',
        OTEL_SERVICE_NAME: 'gw-eu',
      }).tracing,
    ).toEqual({ url: 'https://otel.example.com:4318/v1/traces', headers: { 'x-api-key': 'abc==', tenant: 't1' }, serviceName: 'gw-eu' });
    expect(
      readObservability({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom/traces' }).tracing
        ?.url,
    ).toBe('http://b:4318/custom/traces');
  });

  it.each([
    [{ MEDIAGATE_METRICS_TOKEN: 'short' }, 'MEDIAGATE_METRICS_TOKEN', '16 to 200 printable characters'],
    [{ MEDIAGATE_METRICS_TOKEN: 'has a space in it 0123' }, 'MEDIAGATE_METRICS_TOKEN', 'without spaces'],
    [{ MEDIAGATE_METRICS_TOKEN: TOKEN, MEDIAGATE_METRICS_KEYS: 'alice' }, 'MEDIAGATE_METRICS_KEYS', 'got "alice"'],
    [
      { MEDIAGATE_METRICS_TOKEN: TOKEN, MEDIAGATE_METRICS_KEYS: Array.from({ length: 101 }, (_, i) => `key_${i}`).join(',') },
      'MEDIAGATE_METRICS_KEYS',
      'at most 100',
    ],
    [{ MEDIAGATE_METRICS_KEYS: 'key_abc' }, 'MEDIAGATE_METRICS_KEYS', 'needs MEDIAGATE_METRICS_TOKEN'],
    [{ MEDIAGATE_METRICS_MODELS: 'x' }, 'MEDIAGATE_METRICS_MODELS', 'needs MEDIAGATE_METRICS_TOKEN'],
    [{ MEDIAGATE_OTEL: 'maybe' }, 'MEDIAGATE_OTEL', 'on or off'],
    [{ MEDIAGATE_OTEL: 'on', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', 'absolute http(s) URL'],
    [{ MEDIAGATE_OTEL: 'on', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, 'OTEL_EXPORTER_OTLP_HEADERS', 'name=value pairs'],
  ])('%o is refused naming %s', (env, setting, rule) => {
    let err: unknown;
    try {
      readObservability(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(setting);
    expect((err as ConfigError).message).toContain(rule);
  });
});
