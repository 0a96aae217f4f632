/**
 * The key rules on the public API (G304-G306), table-driven over every create call and chat: a
 * model off the key's allow-list is a 403 `model_not_allowed` naming it, in the family's error
 * body, with nothing created; a name or a `family:*` pattern lets it through. Past `expires_at`
 * (an injected clock) the key is a 401 `key_expired` on every create, on the poll path (also for a
 * task polled before), on lists, and an open long-poll ends with it. A key's own in-flight bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOptions, CREATE_CALLS, errorCodeOf, isErrorBody, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

let clock = Date.now();
let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions({ keyClock: () => clock })));
});
afterAll(async () => {
  await h.close();
});

const post = (url: string, key: string, payload: Record<string, unknown>) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });
const answer = (res: Awaited<ReturnType<typeof post>>) => ({ status: res.statusCode, json: res.json() as Record<string, any>, headers: res.headers });
const taskCount = async (): Promise<number> => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);

describe('model allow-lists on every create call and chat', () => {
  it('the table holds every create path of the OpenAPI document (each honours Idempotency-Key) and chat', async () => {
    type Op = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Op>> };
    const creates = Object.entries(doc.paths)
      .filter(([, ops]) => ops.post?.responses['200']?.headers?.['idempotent-replayed'] !== undefined)
      .map(([path]) => path);
    expect(creates.length).toBeGreaterThanOrEqual(9);
    expect([...creates, '/v1/chat/completions'].sort()).toEqual(CREATE_CALLS.map((c) => c.path).sort());
  });

  it.each(CREATE_CALLS)('POST $path ($model): refused off the list, in the $style body; allowed by name and by $family:*', async (call) => {
    const other = call.family === 'pic' ? 'clip:*' : 'pic';
    const narrow = await h.newKey({ models: [other] });
    const before = await taskCount();
    const refused = answer(await post(call.path, narrow.secret, call.body));
    expect(refused.status, JSON.stringify(refused.json)).toBe(403);
    expect(isErrorBody(call.style, 403, refused.json)).toBe(true);
    expect(errorCodeOf(refused)).toBe('model_not_allowed');
    expect(JSON.stringify(refused.json)).toContain(`may not use model ${call.model}`);
    if (call.style === 'standard') expect(refused.json.error.param).toBe('model');
    expect(await taskCount()).toBe(before);
    for (const models of [[call.model], [`${call.family}:*`], [other, call.model]]) {
      const allowed = await h.newKey({ models });
      const ok = answer(await post(call.path, allowed.secret, call.body));
      expect(ok.status, `${JSON.stringify(models)}: ${JSON.stringify(ok.json)}`).toBe(200);
    }
    const none = await h.newKey({ models: [] });
    expect(errorCodeOf(answer(await post(call.path, none.secret, call.body)))).toBe('model_not_allowed');
  });

  it('a chat stream is refused before it starts; a change of the list applies to the next request', async () => {
    const k = await h.newKey({ models: ['chat-2.5-pro'] });
    const body = { model: 'chat-2.5-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const refused = answer(await post('/v1/chat/completions', k.secret, body));
    expect([refused.status, refused.json.success, refused.headers['x-error-code']]).toEqual([403, false, 'model_not_allowed']);
    await h.admin('PATCH', `/admin/v1/keys/${k.id}`, { models: ['chat:*'] });
    const streamed = await post('/v1/chat/completions', k.secret, body);
    expect(streamed.statusCode).toBe(200);
    expect(streamed.headers['content-type']).toMatch(/text\/event-stream/);
  });
});

describe('expiry', () => {
  it.each(CREATE_CALLS)('POST $path: works until expires_at, then 401 key_expired in the $style body', async (call) => {
    const k = await h.newKey({ expires_at: Math.floor(clock / 1000) + 600 });
    expect((await post(call.path, k.secret, call.body)).statusCode).toBe(200);
    const saved = clock;
    clock += 600_000;
    try {
      const before = await taskCount();
      const expired = answer(await post(call.path, k.secret, call.body));
      expect(expired.status).toBe(401);
      expect(isErrorBody(call.style, 401, expired.json)).toBe(true);
      expect(errorCodeOf(expired)).toBe('key_expired');
      expect(JSON.stringify(expired.json)).toMatch(/expired at \d{4}-\d{2}-\d{2}T/);
      expect(await taskCount()).toBe(before);
    } finally {
      clock = saved;
    }
  });

  it('the poll path: a task polled before the expiry (a cached answer) is refused after it; lists too; a later expires_at revives the key', async () => {
    const k = await h.newKey({ expires_at: Math.floor(clock / 1000) + 60 });
    const id = (await post('/v1/pic/images', k.secret, { model: 'pic', prompt: 'x' })).json().id as string;
    const poll = () => h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: { authorization: `Bearer ${k.secret}` } });
    expect((await poll()).statusCode).toBe(200);
    expect((await poll()).statusCode).toBe(200);
    clock += 60_000;
    const expired = await poll();
    expect([expired.statusCode, expired.json().error.code]).toEqual([401, 'key_expired']);
    expect((await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: { authorization: `Bearer ${k.secret}` } })).json().error.code).toBe('key_expired');
    expect((await h.app.inject({ method: 'GET', url: '/v1/result/task_unknown', headers: { authorization: `Bearer ${k.secret}` } })).json().error.code).toBe(
      'key_expired',
    );
    await h.admin('PATCH', `/admin/v1/keys/${k.id}`, { expires_at: Math.floor(clock / 1000) + 3600 });
    expect((await poll()).statusCode).toBe(200);
  });

  it('an open long-poll ends with 401 key_expired once the key expires', async () => {
    const k = await h.newKey({ expires_at: Math.floor(clock / 1000) + 60 });
    const id = (await post('/v1/pic/images', k.secret, { model: 'pic', prompt: 'x' })).json().id as string; // no worker: stays queued
    const waiting = h.app.inject({ method: 'GET', url: `/v1/result/${id}?wait=30`, headers: { authorization: `Bearer ${k.secret}` } });
    await new Promise((r) => setTimeout(r, 200));
    clock += 60_000;
    const res = await waiting;
    expect([res.statusCode, res.json().error.code]).toEqual([401, 'key_expired']);
  });
});

describe("a key's own tasks_in_flight", () => {
  it("bounds that key only; its refusal names the key's limit", async () => {
    const k = await h.newKey({ limits: { tasks_in_flight: 2 } });
    for (let i = 0; i < 2; i++) expect((await post('/v1/pic/images', k.secret, { model: 'pic', prompt: `${i}` })).statusCode).toBe(200);
    const third = await post('/v1/pic/images', k.secret, { model: 'pic', prompt: '3' });
    expect([third.statusCode, third.json().error.code]).toEqual([429, 'too_many_tasks_in_flight']);
    expect(third.json().error.message).toMatch(/already has 2 tasks .*tasks_in_flight/);
    const free = await h.newKey();
    for (let i = 0; i < 3; i++) expect((await post('/v1/pic/images', free.secret, { model: 'pic', prompt: `${i}` })).statusCode).toBe(200);
    await h.admin('PATCH', `/admin/v1/keys/${k.id}`, { limits: { tasks_in_flight: 3 } });
    expect((await post('/v1/pic/images', k.secret, { model: 'pic', prompt: '3' })).statusCode).toBe(200);
  });
});
