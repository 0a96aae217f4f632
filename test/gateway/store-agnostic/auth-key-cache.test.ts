import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../src/auth/keys.js';
import { bearerKeyHash, keyHashCacheStats } from '../../../src/auth/plugin.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

// The cache of key hashes is bounded in entries and in bytes (G114): 10,000 requests
// with distinct 15 KB bearer tokens must not leave 150 MB of tokens behind.
describe('the bearer key hash cache', () => {
  it('never keeps headers longer than a real key makes, so distinct 15 KB tokens leave nothing behind', () => {
    const before = keyHashCacheStats();
    for (let i = 0; i < 10_050; i++) {
      const token = `${i.toString(36)}-${'x'.repeat(15_000)}`;
      expect(bearerKeyHash(`Bearer ${token}`)).toBe(hashApiKey(token));
    }
    expect(keyHashCacheStats()).toEqual(before);
  });

  it('a short key padded with whitespace to 16 KB is hashed right and not kept either', () => {
    const before = keyHashCacheStats();
    const key = `mg_${randomBytes(32).toString('base64url')}`;
    expect(bearerKeyHash(`Bearer ${key}${' '.repeat(16_000)}`)).toBe(hashApiKey(key));
    expect(keyHashCacheStats()).toEqual(before);
  });

  it('real keys (mg_ keys, a 200-character bootstrap key) are cached, at most 10,000 of them', () => {
    const bootstrap = 'b'.repeat(200);
    expect(bearerKeyHash(`Bearer ${bootstrap}`)).toBe(hashApiKey(bootstrap));
    expect(keyHashCacheStats().entries).toBeGreaterThan(0);
    const keys = Array.from({ length: 12_000 }, () => `mg_${randomBytes(32).toString('base64url')}`);
    for (const key of keys) expect(bearerKeyHash(`Bearer ${key}`)).toBe(hashApiKey(key));
    const stats = keyHashCacheStats();
    expect(stats.entries).toBe(10_000);
    expect(stats.chars).toBe(10_000 * ('Bearer '.length + 46 + 64)); // the oldest went first, the bootstrap key too
    // a hit answers the same hash
    expect(bearerKeyHash(`Bearer ${keys.at(-1)!}`)).toBe(hashApiKey(keys.at(-1)!));
  });
});

describe('over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
  });
  afterAll(async () => {
    await h.close();
  });

  it('a 15 KB token is a 401 invalid_api_key and is not cached; a real key still works', async () => {
    const before = keyHashCacheStats().chars;
    const res = await h.app.inject({ method: 'GET', url: '/v1/result/task_x', headers: { authorization: `Bearer ${'t'.repeat(15_000)}` } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_api_key');
    expect(keyHashCacheStats().chars).toBeLessThan(before + 1000);
    expect((await h.app.inject({ method: 'GET', url: '/v1/result/task_x', headers: h.auth() })).statusCode).toBe(404);
  });
});
