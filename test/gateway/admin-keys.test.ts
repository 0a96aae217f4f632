/**
 * `/admin/v1/keys` through HTTP (G300-G308): a key's secret is in its create (or rotate) answer only,
 * never in a list, a read, the audit log or the log output; bad fields are 400s naming them; unknown
 * ids 404; lists page with cursors and filter; changes apply at once; revoke is retry-safe; rotate
 * keeps the old secret for its grace period only (on an injected clock); last_used is written in
 * batches, not per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';

let clock = Date.now();
let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions({ keyClock: () => clock })));
});
afterAll(async () => {
  await h.close();
});

const get = (url: string, key: string) => h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
const submit = (key: string) =>
  h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: { authorization: `Bearer ${key}` }, payload: { model: 'pic', prompt: 'x' } });

describe('create, read, list', () => {
  it('answers the record with its secret once; the secret works at once and is never shown again', async () => {
    const expires = Math.floor(clock / 1000) + 3600;
    const created = await h.admin('POST', '/admin/v1/keys', {
      name: 'prod',
      models: ['pic', 'clip:*', 'pic'],
      expires_at: expires,
      limits: { submits: 7, queries: 70, credits: 12.5, tasks_in_flight: 3 },
      webhook_url: 'https://hooks.example.com/x',
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const { key: secret, ...record } = created.json;
    expect(secret).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
    expect(record).toEqual({
      id: expect.stringMatching(/^key_/),
      object: 'api_key',
      name: 'prod',
      role: 'caller',
      account_id: expect.stringMatching(/^acct_/),
      models: ['pic', 'clip:*'],
      expires_at: expires,
      limits: { submits: 7, queries: 70, credits: 12.5, tasks_in_flight: 3 },
      webhook_url: 'https://hooks.example.com/x',
      created: expect.any(Number),
      last_used: null,
      revoked: false,
      revoked_at: null,
    });
    expect((await submit(secret as string)).statusCode).toBe(200);
    const read = await h.admin('GET', `/admin/v1/keys/${record.id}`);
    expect(read.json).toMatchObject({ ...record, last_used: expect.any(Number) });
    expect(read.json).not.toHaveProperty('key');
    const bodies = [
      JSON.stringify(read.json),
      JSON.stringify((await h.admin('GET', '/admin/v1/keys?limit=100')).json),
      JSON.stringify((await h.admin('GET', '/admin/v1/audit?limit=100')).json),
    ];
    for (const body of bodies) {
      expect(body).not.toContain(secret);
      expect(body).not.toContain((secret as string).slice(3, 15));
    }
  });

  it('a key of an existing account; an admin key gets an account of its own with no credit', async () => {
    const account = (await h.admin('POST', '/admin/v1/accounts', { name: 'shared' })).json;
    const k = (await h.newKey({ account_id: account.id })).record;
    expect(k.account_id).toBe(account.id);
    const adm = (await h.newKey({ role: 'admin' })).record;
    expect(adm.role).toBe('admin');
    expect((await h.admin('GET', `/admin/v1/accounts/${adm.account_id}`)).json.balance).toBe(0);
  });

  it.each([
    [{}, 'name', /name is required/],
    [{ name: '' }, 'name', /name must not be empty/],
    [{ name: 'a\u0007b' }, 'name', /control characters/],
    [{ name: 'x', role: 'root' }, 'role', /role must be one of: caller, admin/],
    [{ name: 'x', models: ['pic', 'dall-e'] }, 'models[1]', /models\[1\] must be a model of this gateway or a family pattern/],
    [{ name: 'x', models: ['image:*'] }, 'models[0]', /family pattern/],
    [{ name: 'x', expires_at: 1000 }, 'expires_at', /expires_at must be in the future/],
    [{ name: 'x', expires_at: '2030-01-01' }, 'expires_at', /expires_at must be an integer or null/],
    [{ name: 'x', limits: { submits: 0 } }, 'limits.submits', /limits.submits must be >= 1/],
    [{ name: 'x', limits: { credits: 0.0000001 } }, 'limits.credits', /at most 6 decimals/],
    [{ name: 'x', limits: { tasks: 3 } }, 'limits.tasks', /limits.tasks is not a known field/],
    [{ name: 'x', webhook_url: 'ftp://hooks.example.com/x' }, 'webhook_url', /webhook_url: only http and https URLs/],
    [{ name: 'x', account_id: 'acct_missing' }, 'account_id', /account_id acct_missing: no such account/],
    [{ name: 'x', expire_at: 1 }, 'expire_at', /expire_at is not a known field/],
  ])('a bad body %j is a 400 naming %s; nothing is created', async (body, param, message) => {
    const before = (await h.admin('GET', '/admin/v1/keys?limit=100')).json.data.length;
    const res = await h.admin('POST', '/admin/v1/keys', body);
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe(param);
    expect(res.json.error.message).toMatch(message);
    expect((await h.admin('GET', '/admin/v1/keys?limit=100')).json.data.length).toBe(before);
  });

  it('lists newest first in pages chained by next_cursor, filtered by account, role, revoked and name', async () => {
    const account = (await h.admin('POST', '/admin/v1/accounts', { name: 'paged' })).json.id as string;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock += 1000; // newest first by creation time
      ids.push((await h.newKey({ name: `Paged ${i}`, account_id: account })).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: Record<string, any> } = await h.admin('GET', `/admin/v1/keys?account_id=${account}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.json.object).toBe('list');
      seen.push(...(page.json.data as Array<{ id: string }>).map((k) => k.id));
      cursor = page.json.next_cursor as string | null;
      expect(page.json.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    await h.admin('POST', `/admin/v1/keys/${ids[1]}/revoke`);
    expect((await h.admin('GET', `/admin/v1/keys?account_id=${account}&revoked=true`)).json.data.map((k: { id: string }) => k.id)).toEqual([ids[1]]);
    expect((await h.admin('GET', `/admin/v1/keys?account_id=${account}&revoked=false`)).json.data).toHaveLength(4);
    expect((await h.admin('GET', '/admin/v1/keys?q=PAGED%203')).json.data.map((k: { id: string }) => k.id)).toEqual([ids[3]]);
    expect((await h.admin('GET', '/admin/v1/keys?role=admin')).json.data.every((k: { role: string }) => k.role === 'admin')).toBe(true);
    const first = (await h.admin('GET', `/admin/v1/keys?account_id=${account}&limit=1`)).json.next_cursor as string;
    const other = await h.admin('GET', `/admin/v1/keys?limit=1&cursor=${first}`);
    expect([other.status, other.json.error.param, other.json.error.message]).toEqual([400, 'cursor', expect.stringMatching(/other filters/)]);
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=***', 'revoked=yes', 'role=owner', 'sort=name']) {
      expect((await h.admin('GET', `/admin/v1/keys?${q}`)).status, q).toBe(400);
    }
  });

  it('unknown ids are 404 key_not_found on every key route', async () => {
    for (const [method, url, body] of [
      ['GET', '/admin/v1/keys/key_nope'],
      ['PATCH', '/admin/v1/keys/key_nope', { name: 'x' }],
      ['POST', '/admin/v1/keys/key_nope/revoke'],
      ['POST', '/admin/v1/keys/key_nope/rotate', {}],
    ] as const) {
      const res = await h.admin(method, url, body);
      expect([res.status, res.json.error.code], `${method} ${url}`).toEqual([404, 'key_not_found']);
    }
  });
});

describe('change, revoke, rotate', () => {
  it('PATCH changes only what it names (null clears), at once; role and account_id never change', async () => {
    const { id, secret } = await h.newKey({ name: 'p', models: ['pic'], limits: { submits: 5 } });
    const patched = await h.admin('PATCH', `/admin/v1/keys/${id}`, { name: 'renamed', models: null, limits: { tasks_in_flight: 9 } });
    expect(patched.json).toMatchObject({ name: 'renamed', models: null, limits: { submits: 5, queries: null, credits: null, tasks_in_flight: 9 } });
    // models: null lets the key use any model at once
    const clip = await h.app.inject({
      method: 'POST',
      url: '/clip/videos',
      headers: { authorization: `Bearer ${secret}` },
      payload: { model: 'clip_3_1_fast', prompt: 'x' },
    });
    expect(clip.statusCode).toBe(200);
    for (const field of ['role', 'account_id']) {
      const res = await h.admin('PATCH', `/admin/v1/keys/${id}`, { [field]: 'admin' });
      expect([res.status, res.json.error.param, res.json.error.message]).toEqual([400, field, expect.stringMatching(/cannot be changed/)]);
    }
    expect((await h.admin('PATCH', `/admin/v1/keys/${id}`, { limits: { credits: -1 } })).json.error.param).toBe('limits.credits');
  });

  it('revoke: the key is refused from its next request; revoking again answers the same record without a second audit entry', async () => {
    const { id, secret } = await h.newKey();
    expect((await submit(secret)).statusCode).toBe(200);
    const revoked = await h.admin('POST', `/admin/v1/keys/${id}/revoke`);
    expect(revoked.json).toMatchObject({ id, revoked: true, revoked_at: expect.any(Number) });
    expect((await submit(secret)).json().error.code).toBe('invalid_api_key');
    expect((await get('/v1/tasks', secret)).statusCode).toBe(401);
    const again = await h.admin('POST', `/admin/v1/keys/${id}/revoke`);
    expect(again.json).toEqual(revoked.json);
    expect((await h.admin('GET', `/admin/v1/audit?target=${id}&action=key.revoke`)).json.data).toHaveLength(1);
    const rotate = await h.admin('POST', `/admin/v1/keys/${id}/rotate`);
    expect([rotate.status, rotate.json.error.code]).toEqual([409, 'key_revoked']);
  });

  it('rotate: a new secret at once; the old one until grace_seconds pass (polls too), then refused; without grace, at once', async () => {
    const { id, secret: first } = await h.newKey();
    const task = (await submit(first)).json().id as string;
    const rotated = await h.admin('POST', `/admin/v1/keys/${id}/rotate`, { grace_seconds: 60 });
    expect(rotated.json).toMatchObject({ id, key: expect.stringMatching(/^mg_/), previous_valid_until: Math.floor(clock / 1000) + 60 });
    const second = rotated.json.key as string;
    expect(second).not.toBe(first);
    for (const key of [first, second]) {
      expect((await get(`/v1/result/${task}`, key)).statusCode, key).toBe(200);
      expect((await submit(key)).statusCode).toBe(200);
    }
    clock += 60_000;
    expect((await get(`/v1/result/${task}`, first)).json().error).toMatchObject({ code: 'invalid_api_key', message: expect.stringMatching(/rotated/) });
    expect((await submit(first)).statusCode).toBe(401);
    expect((await get(`/v1/result/${task}`, second)).statusCode).toBe(200);
    // without a body: no grace
    const third = (await h.admin('POST', `/admin/v1/keys/${id}/rotate`)).json;
    expect(third.previous_valid_until).toBeNull();
    expect((await submit(second)).statusCode).toBe(401);
    expect((await submit(third.key as string)).statusCode).toBe(200);
    for (const bad of [{ grace_seconds: -1 }, { grace_seconds: 2_592_001 }, { grace_seconds: '5' }]) {
      expect((await h.admin('POST', `/admin/v1/keys/${id}/rotate`, bad)).json.error.param).toBe('grace_seconds');
    }
  });

  it('last_used: written in batches (the GET writes what is pending), not by each request', async () => {
    const { id, secret } = await h.newKey();
    expect((await h.store.keys.get(id))?.lastUsed).toBeNull();
    const at = clock;
    await get('/v1/tasks', secret);
    expect((await h.store.keys.get(id))?.lastUsed).toBeNull(); // nothing written on the request's way
    expect((await h.admin('GET', `/admin/v1/keys/${id}`)).json.last_used).toBe(Math.floor(at / 1000));
  });
});
