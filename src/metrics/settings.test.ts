import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config-error.js';
import { readObservability } from './settings.js';

const TOKEN = 'a-metrics-token-0123';

describe('metrics and tracing settings', () => {
  it('off by default', () => {
    expect(readObservability({})).toEqual({ metrics: undefined, tracing: false });
  });

  it('a token turns /metrics on, with the listed keys and models', () => {
    const s = readObservability({ MEDIAGATE_METRICS_TOKEN: TOKEN, MEDIAGATE_METRICS_KEYS: 'key_abc, key_def', MEDIAGATE_METRICS_MODELS: 'llama-3,qwen', MEDIAGATE_OTEL: 'on' });
    expect(s.metrics?.token).toBe(TOKEN);
    expect([...s.metrics!.keys]).toEqual(['key_abc', 'key_def']);
    expect(s.metrics?.models).toEqual(['llama-3', 'qwen']);
    expect(s.tracing).toBe(true);
  });

  it.each([
    [{ MEDIAGATE_METRICS_TOKEN: 'short' }, 'MEDIAGATE_METRICS_TOKEN', '16 to 200 printable characters'],
    [{ MEDIAGATE_METRICS_TOKEN: 'has a space in it 0123' }, 'MEDIAGATE_METRICS_TOKEN', 'without spaces'],
    [{ MEDIAGATE_METRICS_TOKEN: TOKEN, MEDIAGATE_METRICS_KEYS: 'alice' }, 'MEDIAGATE_METRICS_KEYS', 'got "alice"'],
    [{ MEDIAGATE_METRICS_TOKEN: TOKEN, MEDIAGATE_METRICS_KEYS: Array.from({ length: 101 }, (_, i) => `key_${i}`).join(',') }, 'MEDIAGATE_METRICS_KEYS', 'at most 100'],
    [{ MEDIAGATE_METRICS_KEYS: 'key_abc' }, 'MEDIAGATE_METRICS_KEYS', 'needs MEDIAGATE_METRICS_TOKEN'],
    [{ MEDIAGATE_METRICS_MODELS: 'x' }, 'MEDIAGATE_METRICS_MODELS', 'needs MEDIAGATE_METRICS_TOKEN'],
    [{ MEDIAGATE_OTEL: 'maybe' }, 'MEDIAGATE_OTEL', 'on or off'],
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
