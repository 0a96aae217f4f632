/**
 * providers.json entries of type `replicate`: the default address, the `models` mapping required
 * and checked (exactly one of model and version; no constant that a field also maps to), and a
 * route naming a model the mapping does not have refused at start, each a ConfigError naming it.
 */
import { describe, expect, it } from 'vitest';
import { readProvidersFile } from '../../src/providers/providers-file.js';
import { configError, configFiles } from '../helpers/config-files.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';

const { file } = configFiles('mediagate-replicate-config-');
const read = (content: unknown) => readProvidersFile({ MEDIAGATE_PROVIDERS: file(content), REP_KEY: 'r8_secretsecret' });
const flux = REPLICATE_MODELS['flux-schnell'];

describe('providers.json: type replicate', () => {
  it('takes the documented entry: the real API by default, the key from its variable, the mapping kept', () => {
    const cfg = read({
      providers: { rep: { type: 'replicate', apiKeyEnv: 'REP_KEY', pollSeconds: 2, models: { 'flux-schnell': flux } } },
      routes: { 'pic-2': [{ provider: 'rep', model: 'flux-schnell' }] },
    })!;
    expect(cfg.providers[0]).toMatchObject({
      id: 'rep',
      type: 'replicate',
      baseUrl: 'https://api.replicate.com/v1',
      apiKey: 'r8_secretsecret',
      pollSeconds: 2,
      models: { 'flux-schnell': flux },
    });
  });

  it.each([
    ['no models', { type: 'replicate' }, /providers\.rep\.models is required for type replicate/],
    [
      'model and version both',
      { type: 'replicate', models: { x: { ...flux, version: 'a'.repeat(64) } } },
      /providers\.rep\.models\.x must name exactly one of "model" \(owner\/name\) and "version"/,
    ],
    ['neither model nor version', { type: 'replicate', models: { x: { output: 'image', input: { prompt: 'prompt' } } } }, /models\.x must name exactly one/],
    [
      'a constant a field maps to',
      { type: 'replicate', models: { x: { ...flux, constants: { aspect_ratio: '1:1' } } } },
      /models\.x constants\.aspect_ratio is also an input a request field maps to/,
    ],
    ['an input name that is not one', { type: 'replicate', models: { x: { ...flux, input: { prompt: 'the prompt' } } } }, /models/],
  ])('%s: a ConfigError naming it', (_name, entry, message) => {
    expect(configError(() => read({ providers: { rep: entry } })).message).toMatch(message);
  });

  it('a route to a model the mapping does not have: a ConfigError naming the route and the names it has', () => {
    const err = configError(() =>
      read({ providers: { rep: { type: 'replicate', models: { 'flux-schnell': flux } } }, routes: { 'pic-2': [{ provider: 'rep', model: 'flux-dev' }] } }),
    );
    expect(err.message).toMatch(/routes\.pic-2\[0\]: provider "rep" \(type replicate\) has no models entry "flux-dev" \(it has flux-schnell\)/);
    const bare = configError(() =>
      read({ providers: { rep: { type: 'replicate', models: { 'flux-schnell': flux } } }, routes: { 'pic-2': [{ provider: 'rep' }] } }),
    );
    expect(bare.message).toMatch(/has no models entry "pic-2"/);
  });

  it('models is a setting of replicate only', () => {
    expect(configError(() => read({ providers: { r: { type: 'relay', baseUrl: 'http://x.test', models: {} } } })).message).toMatch(
      /providers\.r\.models does not apply to type relay \(it is a setting of replicate/,
    );
  });
});
