import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

const create = (headers: Record<string, string>) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/pic/images',
    headers: { 'content-type': 'application/json', ...headers },
    payload: { model: 'pic', prompt: 'x' },
  });

describe('authentication (D5)', () => {
  it.each([
    ['no header', {}, 'missing_api_key'],
    ['not bearer', { authorization: 'Basic dXNlcjpwYXNz' }, 'missing_api_key'],
    ['unknown key', { authorization: 'Bearer mg_not-a-real-key' }, 'invalid_api_key'],
  ])('%s -> 401 %s on create and query', async (_name, headers, code) => {
    for (const res of [await create(headers), await h.app.inject({ method: 'GET', url: '/v1/result/task_x', headers })]) {
      expect(res.statusCode).toBe(401);
      expect(body(res).error).toMatchObject({ type: 'authentication_error', code });
    }
  });

  it('a revoked key fails at once', async () => {
    const { secret, record } = await createApiKey(h.store.keys, 'temp');
    expect((await create({ authorization: `Bearer ${secret}` })).statusCode).toBe(200);
    const id = body(await create({ authorization: `Bearer ${secret}` })).id as string;
    const poll = () => h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: { authorization: `Bearer ${secret}` } });
    expect((await poll()).statusCode).toBe(200);
    expect(await h.store.keys.revoke(record.id, Date.now())).toBe(true);
    const res = await create({ authorization: `Bearer ${secret}` });
    expect(res.statusCode).toBe(401);
    expect(body(res).error.code).toBe('invalid_api_key');
    const polled = await poll();
    expect(polled.statusCode).toBe(401);
    expect(body(polled).error.code).toBe('invalid_api_key');
  });

  it('keys are stored only as SHA-256 hashes', async () => {
    const { secret } = await createApiKey(h.store.keys, 'hashcheck');
    const listed = JSON.stringify(await h.store.keys.list());
    expect(listed).not.toContain(secret);
  });

  it('health and docs need no key', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });
});

describe('tenant isolation (D6)', () => {
  it("another key's task is a 404 exactly like an unknown id", async () => {
    const id = body(await create(h.auth())).id as string;
    const mine = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(mine.statusCode).toBe(200);
    const theirs = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth(h.otherKey) });
    const unknown = await h.app.inject({ method: 'GET', url: '/v1/result/task_doesnotexist0000000000', headers: h.auth(h.otherKey) });
    expect(theirs.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(body(theirs).error.code).toBe('task_not_found');
    expect(body(theirs).error.message.replace(id, 'ID')).toBe(body(unknown).error.message.replace('task_doesnotexist0000000000', 'ID'));
  });

  it('task ids are unguessable: 128 random bits, URL-safe, distinct', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) ids.add(body(await create(h.auth())).id);
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^task_[A-Za-z0-9_-]{30}$/);
  });
});

describe('routing', () => {
  it('an unknown route is a JSON 404', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/nope', headers: h.auth() });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(body(res).error.code).toBe('route_not_found');
  });
});
