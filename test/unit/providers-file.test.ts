/**
 * MEDIAGATE_PROVIDERS (providers.json): what a valid file gives, and that every mistake stops the
 * start with a ConfigError naming the setting, the place in the file and the rule (G90).
 */
import { describe, expect, it } from 'vitest';
import { readProvidersFile } from '../../src/providers/providers-file.js';
import { configError, configFiles } from '../helpers/config-files.js';

const { file } = configFiles('mediagate-providers-');

const issueExample = {
  providers: {
    primary: { type: 'relay', baseUrl: 'https://api.example.com', apiKeyEnv: 'PRIMARY_KEY' },
    backup: { type: 'relay', baseUrl: 'https://backup.example.com', powerBaseUrl: 'https://backup.example.com/power', apiKeyEnv: 'BACKUP_KEY' },
  },
  routes: { '*': [{ provider: 'primary' }, { provider: 'backup' }] },
};
const keys = { PRIMARY_KEY: 'pk-primary-secret-1', BACKUP_KEY: 'pk-backup-secret-2' };

describe('providers.json', () => {
  it('not set: undefined (the shorthand settings apply)', () => {
    expect(readProvidersFile({})).toBeUndefined();
  });

  it('the example of the README: providers with their keys resolved, candidates in list order', () => {
    const cfg = readProvidersFile({ MEDIAGATE_PROVIDERS: file(issueExample), ...keys })!;
    expect(cfg.providers).toEqual([
      {
        id: 'primary',
        type: 'relay',
        baseUrl: 'https://api.example.com',
        apiKey: keys.PRIMARY_KEY,
        keySetting: 'the environment variable PRIMARY_KEY (providers.primary.apiKeyEnv)',
      },
      {
        id: 'backup',
        type: 'relay',
        baseUrl: 'https://backup.example.com',
        powerBaseUrl: 'https://backup.example.com/power',
        apiKey: keys.BACKUP_KEY,
        keySetting: 'the environment variable BACKUP_KEY (providers.backup.apiKeyEnv)',
      },
    ]);
    expect(cfg.routes).toEqual({
      '*': [
        { provider: 'primary', priority: 0, weight: 1 },
        { provider: 'backup', priority: 1, weight: 1 },
      ],
    });
  });

  it('media and chat in one file: model names at the provider, priorities, weights, per-family poll seconds', () => {
    const cfg = readProvidersFile({
      OPENAI_KEY: 'sk-x-123456',
      MEDIAGATE_PROVIDERS: file({
        providers: {
          a: { type: 'relay', baseUrl: 'http://10.0.0.5:8790/', pollSeconds: { clip: 10, pic: 1 }, concurrency: 16, timeoutMs: 20_000 },
          b: { type: 'relay', baseUrl: 'http://10.0.0.6:8790', pollSeconds: 2 },
          openai: { type: 'openai-chat', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_KEY', maxTokensParam: 'max_tokens' },
          sandbox: { type: 'sandbox', timing: 'fast' },
        },
        routes: {
          pic: [
            { provider: 'a', weight: 3, priority: 0 },
            { provider: 'b', weight: 1, priority: 0 },
            { provider: 'sandbox', priority: 5 },
          ],
          'clip3.1-fast': [{ provider: 'b', model: 'clip_3_1_fast' }],
          'chat-2.5-flash': [{ provider: 'openai', model: 'gpt-4o-mini' }, { provider: 'a' }],
        },
      }),
    })!;
    expect(cfg.providers.find((p) => p.id === 'a')).toMatchObject({
      baseUrl: 'http://10.0.0.5:8790',
      pollSeconds: { clip: 10, pic: 1 },
      concurrency: 16,
      timeoutMs: 20_000,
    });
    expect(cfg.providers.find((p) => p.id === 'openai')).toMatchObject({ type: 'openai-chat', apiKey: 'sk-x-123456', maxTokensParam: 'max_tokens' });
    expect(cfg.routes.pic).toEqual([
      { provider: 'a', priority: 0, weight: 3 },
      { provider: 'b', priority: 0, weight: 1 },
      { provider: 'sandbox', priority: 5, weight: 1 },
    ]);
    expect(cfg.routes['clip3.1-fast']).toEqual([{ provider: 'b', model: 'clip_3_1_fast', priority: 0, weight: 1 }]);
    expect(cfg.routes['chat-2.5-flash']).toEqual([
      { provider: 'openai', model: 'gpt-4o-mini', priority: 0, weight: 1 },
      { provider: 'a', priority: 1, weight: 1 },
    ]);
  });

  const relay = { type: 'relay', baseUrl: 'https://up.example.com' };
  const invalid: Array<[string, unknown, RegExp]> = [
    ['not JSON', '{ "providers": ', /is not valid JSON/],
    ['no providers', { routes: {} }, /providers is required/],
    [
      'unknown type',
      { providers: { a: { type: 'midjourney', baseUrl: 'https://x' } } },
      /providers\.a\.type must be one of relay, openai-chat, openai-images, replicate, gemini, fal, comfyui, sandbox, got "midjourney"/,
    ],
    [
      'a fal route to a model without an input mapping',
      {
        providers: { f: { type: 'fal', models: { 'fal-ai/flux/dev': { inputs: { prompt: 'prompt' }, output: 'images[].url' } } } },
        routes: { pic: [{ provider: 'f', model: 'fal-ai/flux/schnell' }] },
      },
      /routes\.pic\[0\]: provider "f" \(type fal\) has no entry in its "models" for "fal-ai\/flux\/schnell"/,
    ],
    [
      'a fal mapping without output',
      { providers: { f: { type: 'fal', models: { 'fal-ai/flux/dev': { inputs: { prompt: 'prompt' } } } } } },
      /providers\.f\.models\.fal-ai\/flux\/dev/,
    ],
    [
      'a typo of a field',
      { providers: { a: { type: 'relay', baseURL: 'https://x' } } },
      /providers\.a has an unknown field "baseURL" \(allowed: type, baseUrl, /,
    ],
    [
      'a field of another type',
      { providers: { a: { ...relay, maxTokensParam: 'max_tokens' } } },
      /providers\.a\.maxTokensParam does not apply to type relay \(it is a setting of openai-chat; relay takes baseUrl, /,
    ],
    ['sandbox with a URL', { providers: { s: { type: 'sandbox', baseUrl: 'https://x' } } }, /providers\.s\.baseUrl does not apply to type sandbox/],
    ['a relay without baseUrl', { providers: { a: { type: 'relay' } } }, /providers\.a\.baseUrl is required for type relay/],
    [
      'a URL that is not http(s)',
      { providers: { a: { type: 'relay', baseUrl: 'ftp://x' } } },
      /providers\.a\.baseUrl must be an http\(s\) URL, got "ftp:\/\/x"/,
    ],
    ['a URL with credentials', { providers: { a: { type: 'relay', baseUrl: 'https://u:p@x' } } }, /providers\.a\.baseUrl must not contain credentials/],
    ['a URL with a query', { providers: { a: { type: 'relay', baseUrl: 'https://x/?k=1' } } }, /must not have a query or fragment/],
    ['a bad provider id', { providers: { 'a b': relay } }, /providers\.a b: provider ids are letters, digits/],
    [
      'concurrency 0',
      { providers: { a: { ...relay, concurrency: 0 } } },
      /providers\.a\.concurrency must be a whole number of calls between 1 and 10000, got 0/,
    ],
    ['pollSeconds for an unknown family', { providers: { a: { ...relay, pollSeconds: { chat: 1 } } } }, /pollSeconds/],
    [
      'a route to an unknown provider',
      { providers: { a: relay }, routes: { pic: [{ provider: 'b' }] } },
      /routes\.pic\[0\]\.provider must name one of the providers \(a\), got "b"/,
    ],
    [
      'a route of an unknown model',
      { providers: { a: relay }, routes: { 'pic-9': [{ provider: 'a' }] } },
      /routes\.pic-9: "pic-9" is not a model of this interface/,
    ],
    [
      'a media model routed to a chat-only provider',
      { providers: { o: { type: 'openai-chat', baseUrl: 'https://x/v1' } }, routes: { pic: [{ provider: 'o' }] } },
      /routes\.pic\[0\]: provider "o" \(type openai-chat\) cannot serve pic, a pic model \(openai-chat serves chat\)/,
    ],
    ['an empty route', { providers: { a: relay }, routes: { pic: [] } }, /routes\.pic must be a list of 1 to 32 candidates/],
    [
      'a provider twice in a route',
      { providers: { a: relay }, routes: { '*': [{ provider: 'a' }, { provider: 'a' }] } },
      /routes\.\*\[1\]: provider "a" is listed twice/,
    ],
    ['weight 0', { providers: { a: relay }, routes: { pic: [{ provider: 'a', weight: 0 }] } }, /routes\.pic\.0\.weight must be a positive number/],
    [
      'a typo in a candidate',
      { providers: { a: relay }, routes: { pic: [{ provider: 'a', modle: 'x' }] } },
      /has an unknown field "modle" \(allowed: provider, model, priority, weight\)/,
    ],
  ];

  it.each(invalid)('%s -> ConfigError naming MEDIAGATE_PROVIDERS', (_name, content, message) => {
    const err = configError(() => readProvidersFile({ MEDIAGATE_PROVIDERS: file(content) }));
    expect(err.setting).toBe('MEDIAGATE_PROVIDERS');
    expect(err.message).toMatch(message);
  });

  it('a key variable that is not set -> ConfigError naming that variable and where the file names it', () => {
    const err = configError(() => readProvidersFile({ MEDIAGATE_PROVIDERS: file(issueExample), PRIMARY_KEY: 'x' }));
    expect(err.setting).toBe('BACKUP_KEY');
    expect(err.message).toMatch(/is empty or not set, but providers\.backup\.apiKeyEnv in MEDIAGATE_PROVIDERS names it/);
  });

  it.each([
    ['MEDIAGATE_MODEL_ROUTES', 'pic=sandbox', /write its model=provider pairs as "routes"/],
    ['MEDIAGATE_CHAT_CONFIG', '/etc/chat.json', /as a provider of type openai-chat/],
    ['MEDIAGATE_CHAT_UPSTREAM_URL', 'https://api.openai.com/v1', /as a provider of type openai-chat/],
  ])('%s together with MEDIAGATE_PROVIDERS -> ConfigError saying how to move it into the file', (name, value, how) => {
    const err = configError(() => readProvidersFile({ MEDIAGATE_PROVIDERS: file(issueExample), ...keys, [name]: value }));
    expect(err.setting).toBe(name);
    expect(err.message).toMatch(/cannot be used together with MEDIAGATE_PROVIDERS/);
    expect(err.message).toMatch(how);
  });

  it('no message quotes a key', () => {
    const bad = { ...issueExample, providers: { ...issueExample.providers, primary: { ...issueExample.providers.primary, baseUrl: 'nope' } } };
    const err = configError(() => readProvidersFile({ MEDIAGATE_PROVIDERS: file(bad), ...keys }));
    expect(err.message).not.toContain(keys.PRIMARY_KEY);
    expect(err.message).not.toContain(keys.BACKUP_KEY);
  });
});
