import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadChatUpstreams, readChatUpstreamSpecs } from '../../src/chat/upstream-config.js';
import { configError, configFiles } from '../helpers/config-files.js';

const { dir, file } = configFiles('mediagate-chatcfg-');

const good = {
  upstreams: {
    openai: { baseUrl: 'https://api.openai.com/v1/', apiKeyEnv: 'OPENAI_API_KEY', timeoutMs: 60000 },
    local: { baseUrl: 'http://127.0.0.1:8000/v1', maxTokensParam: 'max_tokens' },
    unused: { baseUrl: 'http://127.0.0.1:9/v1' },
  },
  models: {
    'chat-2.5-flash': { upstream: 'openai', model: 'gpt-4o-mini' },
    'chat-2.5-pro': { upstream: 'openai', model: 'gpt-4o' },
    'chat-3-flash-preview': { upstream: 'local', model: 'llama3' },
  },
};

describe('loadChatUpstreams', () => {
  it('nothing configured: no providers, no routes (all sandbox)', () => {
    expect(loadChatUpstreams({})).toEqual({ providers: [], routes: {} });
  });

  it('the file form: providers openai:<name>, routes, the key from apiKeyEnv, unused upstreams skipped', () => {
    const env = { MEDIAGATE_CHAT_CONFIG: file(good), OPENAI_API_KEY: 'sk-live-xyz' };
    const specs = readChatUpstreamSpecs(env);
    expect(specs.map((s) => s.name)).toEqual(['openai', 'local']);
    expect(specs[0]).toMatchObject({
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-live-xyz',
      timeoutMs: 60000,
      stallTimeoutMs: 30000,
      models: { 'chat-2.5-flash': 'gpt-4o-mini', 'chat-2.5-pro': 'gpt-4o' },
    });
    expect(specs[1]).toMatchObject({ apiKey: undefined, maxTokensParam: 'max_tokens', timeoutMs: 120000, models: { 'chat-3-flash-preview': 'llama3' } });
    const { providers, routes } = loadChatUpstreams(env);
    expect(providers.map((p) => p.id)).toEqual(['openai:openai', 'openai:local']);
    const one = (provider: string, model: string) => [{ provider, model, priority: 0, weight: 1 }];
    expect(routes).toEqual({
      'chat-2.5-flash': one('openai:openai', 'gpt-4o-mini'),
      'chat-2.5-pro': one('openai:openai', 'gpt-4o'),
      'chat-3-flash-preview': one('openai:local', 'llama3'),
    });
  });

  it('the env shorthand, with * for all six', () => {
    const { providers, routes } = loadChatUpstreams({ MEDIAGATE_CHAT_UPSTREAM_URL: 'http://127.0.0.1:11434/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=llama3' });
    expect(providers.map((p) => p.id)).toEqual(['openai:env']);
    // the six chat models (docs/reference/api/chat.md#request)
    expect(Object.keys(routes).sort()).toEqual([
      'chat-2.5-flash',
      'chat-2.5-flash-lite',
      'chat-2.5-pro',
      'chat-3-flash-preview',
      'chat-3-pro-preview',
      'chat-3.1-pro-preview',
    ]);
    const specs = readChatUpstreamSpecs({
      MEDIAGATE_CHAT_UPSTREAM_URL: 'https://api.openai.com/v1',
      MEDIAGATE_CHAT_UPSTREAM_KEY: 'sk-1',
      MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-flash=gpt-4o-mini, chat-2.5-pro=gpt-4o',
      MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS: '20000',
    });
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({
      name: 'env',
      apiKey: 'sk-1',
      timeoutMs: 20000,
      stallTimeoutMs: 20000,
      models: { 'chat-2.5-flash': 'gpt-4o-mini', 'chat-2.5-pro': 'gpt-4o' },
    });
  });

  it("file and env together; an explicit mapping beats the other source's *", () => {
    const env = {
      MEDIAGATE_CHAT_CONFIG: file({ upstreams: { a: { baseUrl: 'http://127.0.0.1:1/v1' } }, models: { '*': { upstream: 'a', model: 'm-a' } } }),
      MEDIAGATE_CHAT_UPSTREAM_URL: 'http://127.0.0.1:2/v1',
      MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-pro=m-env',
    };
    const { routes } = loadChatUpstreams(env);
    expect(routes['chat-2.5-pro']).toEqual([{ provider: 'openai:env', model: 'm-env', priority: 0, weight: 1 }]);
    expect(routes['chat-2.5-flash']).toEqual([{ provider: 'openai:a', model: 'm-a', priority: 0, weight: 1 }]);
    expect(Object.keys(routes)).toHaveLength(6);
  });

  const invalidFiles: Array<[string, unknown, RegExp]> = [
    ['not JSON', '{ nope', /not valid JSON/],
    ['not an object', '[]', /JSON object/],
    ['no upstreams', { models: {} }, /upstreams is required/],
    ['no models', { upstreams: {} }, /models is required/],
    ['unknown top-level field', { ...good, extra: 1 }, /unknown field "extra"/],
    ['unknown upstream field (typo)', { upstreams: { a: { baseURL: 'http://x/v1' } }, models: {} }, /unknown field "baseURL"/],
    ['missing baseUrl', { upstreams: { a: { apiKey: 'k' } }, models: {} }, /upstreams\.a\.baseUrl is required/],
    ['bad baseUrl', { upstreams: { a: { baseUrl: 'not a url' } }, models: {} }, /upstreams\.a\.baseUrl must be an absolute http\(s\) URL/],
    ['ftp baseUrl', { upstreams: { a: { baseUrl: 'ftp://x/v1' } }, models: {} }, /must be an http\(s\) URL/],
    ['credentials in baseUrl', { upstreams: { a: { baseUrl: 'http://u:p@x/v1' } }, models: {} }, /must not contain credentials/],
    ['apiKey and apiKeyEnv', { upstreams: { a: { baseUrl: 'http://x/v1', apiKey: 'k', apiKeyEnv: 'K' } }, models: {} }, /not both/],
    ['empty apiKey', { upstreams: { a: { baseUrl: 'http://x/v1', apiKey: '' } }, models: {} }, /apiKey must be a non-empty string/],
    ['bad timeoutMs', { upstreams: { a: { baseUrl: 'http://x/v1', timeoutMs: -5 } }, models: {} }, /timeoutMs must be a whole number/],
    ['bad maxTokensParam', { upstreams: { a: { baseUrl: 'http://x/v1', maxTokensParam: 'n_predict' } }, models: {} }, /maxTokensParam must be one of/],
    ['bad upstream name', { upstreams: { 'a b': { baseUrl: 'http://x/v1' } }, models: {} }, /upstream names/],
    [
      'unknown chat model',
      { upstreams: { a: { baseUrl: 'http://x/v1' } }, models: { 'gpt-4o': { upstream: 'a', model: 'gpt-4o' } } },
      /"gpt-4o" is not a chat model/,
    ],
    [
      'unknown upstream in a model',
      { upstreams: { a: { baseUrl: 'http://x/v1' } }, models: { 'chat-2.5-pro': { upstream: 'b', model: 'm' } } },
      /models\.chat-2\.5-pro\.upstream must name one of the upstreams \(a\)/,
    ],
    [
      'missing upstream model',
      { upstreams: { a: { baseUrl: 'http://x/v1' } }, models: { 'chat-2.5-pro': { upstream: 'a' } } },
      /models\.chat-2\.5-pro\.model is required: the upstream's model name/,
    ],
  ];

  it.each(invalidFiles)('file: %s -> ConfigError naming MEDIAGATE_CHAT_CONFIG', (_name, content, message) => {
    const err = configError(() => loadChatUpstreams({ MEDIAGATE_CHAT_CONFIG: file(content) }));
    expect(err.setting).toBe('MEDIAGATE_CHAT_CONFIG');
    expect(err.message).toMatch(message);
  });

  it('file: missing file', () => {
    const err = configError(() => loadChatUpstreams({ MEDIAGATE_CHAT_CONFIG: path.join(dir, 'nope.json') }));
    expect(err.setting).toBe('MEDIAGATE_CHAT_CONFIG');
    expect(err.message).toMatch(/cannot read.*ENOENT/);
  });

  it('file: apiKeyEnv naming an unset variable -> ConfigError naming that variable', () => {
    const err = configError(() => loadChatUpstreams({ MEDIAGATE_CHAT_CONFIG: file(good) }));
    expect(err.setting).toBe('OPENAI_API_KEY');
    expect(err.message).toMatch(/upstreams\.openai\.apiKeyEnv/);
  });

  const invalidEnv: Array<[string, Record<string, string>, string, RegExp]> = [
    ['models without URL', { MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=x' }, 'MEDIAGATE_CHAT_UPSTREAM_URL', /required when MEDIAGATE_CHAT_UPSTREAM_MODELS/],
    ['key without URL', { MEDIAGATE_CHAT_UPSTREAM_KEY: 'sk' }, 'MEDIAGATE_CHAT_UPSTREAM_URL', /required when MEDIAGATE_CHAT_UPSTREAM_KEY/],
    ['URL without models', { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1' }, 'MEDIAGATE_CHAT_UPSTREAM_MODELS', /is required/],
    ['bad URL', { MEDIAGATE_CHAT_UPSTREAM_URL: 'localhost:8000', MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=x' }, 'MEDIAGATE_CHAT_UPSTREAM_URL', /http\(s\) URL/],
    [
      'unknown model',
      { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-9=x' },
      'MEDIAGATE_CHAT_UPSTREAM_MODELS',
      /"chat-9" is not a chat model/,
    ],
    [
      'malformed entry',
      { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-pro' },
      'MEDIAGATE_CHAT_UPSTREAM_MODELS',
      /entries look like/,
    ],
    [
      'listed twice',
      { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-pro=a,chat-2.5-pro=b' },
      'MEDIAGATE_CHAT_UPSTREAM_MODELS',
      /twice/,
    ],
    [
      'bad timeout',
      { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=x', MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS: '5s' },
      'MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS',
      /milliseconds/,
    ],
    [
      'bad max tokens param',
      { MEDIAGATE_CHAT_UPSTREAM_URL: 'http://x/v1', MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=x', MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM: 'x' },
      'MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM',
      /one of/,
    ],
  ];

  it.each(invalidEnv)('env: %s -> ConfigError naming the setting', (_name, env, setting, message) => {
    const err = configError(() => loadChatUpstreams(env));
    expect(err.setting).toBe(setting);
    expect(err.message).toMatch(message);
  });

  it('a model mapped in both the file and the env -> ConfigError', () => {
    const err = configError(() =>
      loadChatUpstreams({
        MEDIAGATE_CHAT_CONFIG: file({ upstreams: { a: { baseUrl: 'http://x/v1' } }, models: { 'chat-2.5-pro': { upstream: 'a', model: 'm' } } }),
        MEDIAGATE_CHAT_UPSTREAM_URL: 'http://y/v1',
        MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-pro=n',
      }),
    );
    expect(err.setting).toBe('MEDIAGATE_CHAT_UPSTREAM_MODELS');
    expect(err.message).toMatch(/also mapped in MEDIAGATE_CHAT_CONFIG/);
  });

  it('error messages never contain the keys', () => {
    const env = { MEDIAGATE_CHAT_CONFIG: file({ upstreams: { a: { baseUrl: 'nope', apiKey: 'sk-supersecret-123' } }, models: {} }) };
    expect(configError(() => loadChatUpstreams(env)).message).not.toContain('sk-supersecret');
    const env2 = { MEDIAGATE_CHAT_UPSTREAM_URL: 'bad', MEDIAGATE_CHAT_UPSTREAM_KEY: 'sk-supersecret-123', MEDIAGATE_CHAT_UPSTREAM_MODELS: '*=x' };
    expect(configError(() => loadChatUpstreams(env2)).message).not.toContain('sk-supersecret');
  });
});
