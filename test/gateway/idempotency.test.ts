import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { idempotencyTaskKey } from '../../src/store/types.js';
import { mediaRefs } from '../../src/contract/media-refs.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { countTasksByStatus, insertTask } from '../helpers/task-rows.js';

// Idempotency-Key on every create endpoint (G70-G73).
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const CREATES: Array<[string, Record<string, unknown>]> = [
  ['/v1/pic/images', { model: 'pic', prompt: 'a fox' }],
  ['/clip/videos', { prompt: 'a fox' }],
  ['/reel/videos', { model: 'reel-2', prompt: 'a fox' }],
  ['/v1/motion/videos', { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a fox' }] }],
  ['/v1/videos/videos', { model: 'videos', prompt: 'a fox', duration: 5 }],
  ['/v2/model-center/tasks', { model: 'sd_2.0_fast_discount', prompt: 'a fox' }],
];

const taskCount = async (): Promise<number> => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
let n = 0;

function post(url: string, body: unknown, idemKey?: string, key = h.key) {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { ...h.auth(key), ...(idemKey !== undefined && { 'idempotency-key': idemKey }) },
    payload: body as Record<string, unknown>,
  });
}

describe.each(CREATES)('%s', (url, body) => {
  it('the same key and body answer the first response again: no new task', async () => {
    const key = `k-${++n}`;
    const first = await post(url, body, key);
    expect(first.statusCode).toBe(200);
    const before = await taskCount();
    const again = await post(url, body, key);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await taskCount()).toBe(before);
  });

  it('the same key with another body is a 409; without a key every call is new', async () => {
    const key = `k-${++n}`;
    expect((await post(url, body, key)).statusCode).toBe(200);
    const other = await post(url, { ...body, prompt: 'another fox', content: [{ type: 'text', text: 'another fox' }] }, key);
    expect(other.statusCode).toBe(409);
    const err = other.json();
    expect(err.error?.code ?? err.code).toBe(err.error ? 'idempotency_key_reused' : '409');
    const before = await taskCount();
    await post(url, body);
    await post(url, body);
    expect(await taskCount()).toBe(before + 2);
  });
});

describe('scope and rules', () => {
  it('the same fields in another order (nested objects too) are the same request; another array order is not', async () => {
    const url = '/v1/motion/videos';
    const first = await post(
      url,
      JSON.parse(
        '{"model":"motion_2_0","duration":5,"content":[{"type":"text","text":"a fox"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"},"role":"first_frame"}]}',
      ),
      'reordered',
    );
    expect(first.statusCode, first.body).toBe(200);
    const before = await taskCount();
    const again = await post(
      url,
      JSON.parse(
        '{"content":[{"text":"a fox","type":"text"},{"role":"first_frame","image_url":{"url":"https://example.com/a.png"},"type":"image_url"}],"duration":5,"model":"motion_2_0"}',
      ),
      'reordered',
    );
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    const swapped = await post(
      url,
      JSON.parse(
        '{"model":"motion_2_0","duration":5,"content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"},"role":"first_frame"},{"type":"text","text":"a fox"}]}',
      ),
      'reordered',
    );
    expect(swapped.statusCode).toBe(409);
    expect(swapped.json().error.code).toBe('idempotency_key_reused');
    expect(await taskCount()).toBe(before);
  });

  it('keys are scoped to the API key: another key with the same Idempotency-Key creates its own task', async () => {
    const [url, body] = CREATES[0]!;
    const a = await post(url, body, 'shared');
    const b = await post(url, body, 'shared', h.otherKey);
    expect(b.statusCode).toBe(200);
    expect(b.json().id).not.toBe(a.json().id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a failed request does not keep the key: fixing the body under the same key works', async () => {
    const bad = await post('/v1/pic/images', { model: 'pic', prompt: 'x', size: '7:1' }, 'retry-me');
    expect(bad.statusCode).toBe(400);
    const good = await post('/v1/pic/images', { model: 'pic', prompt: 'x', size: '1:1' }, 'retry-me');
    expect(good.statusCode).toBe(200);
  });

  it('a malformed Idempotency-Key is a 400 naming the header', async () => {
    const res = await post('/v1/pic/images', { model: 'pic', prompt: 'x' }, 'has space');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_request', param: 'Idempotency-Key' });
  });

  it('concurrent requests with one key make one task', async () => {
    const before = await taskCount();
    const replies = await Promise.all(Array.from({ length: 5 }, () => post('/v1/pic/images', { model: 'pic', prompt: 'race' }, 'race-key')));
    const ok = replies.filter((r) => r.statusCode === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of replies.filter((x) => x.statusCode !== 200)) {
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe('idempotency_in_progress');
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(new Set(ok.map((r) => r.json().id)).size).toBe(1);
    expect(await taskCount()).toBe(before + 1);
  });

  it('a request that died after committing its task (response never stored) is answered with that task, not a second one', async () => {
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    const body = { model: 'pic', prompt: 'crashed' };
    const fingerprint = createHash('sha256')
      .update(`/v1/pic/images\n${JSON.stringify(body)}`)
      .digest('base64url');
    const claimedAt = Date.now() - 5 * 60_000; // older than the 2-minute stale bound
    // what the dead request left: its claim (no response) and its committed task
    expect(await h.store.idempotency.begin(keyId, 'died', fingerprint, claimedAt, 0, 0)).toEqual({ state: 'new' });
    const orphan = await insertTask(h.store.tasks, {
      id: 'task_orphan_of_a_crash',
      ownerKeyId: keyId,
      family: 'pic',
      form: null,
      model: 'pic',
      provider: 'sandbox',
      request: { params: { prompt: 'crashed' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
      amount: 1,
      createdAt: claimedAt,
      idempotencyKey: idempotencyTaskKey(keyId, 'died', claimedAt),
    });
    const before = await taskCount();
    const other = await post('/v1/pic/images', { model: 'pic', prompt: 'something else' }, 'died');
    expect(other.statusCode).toBe(409);
    const retry = await post('/v1/pic/images', body, 'died');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toMatchObject({ id: orphan.id, object: 'image', status: 'queued', model: 'pic' });
    expect((await post('/v1/pic/images', body, 'died')).body).toBe(retry.body);
    expect(await taskCount()).toBe(before);
  });

  it('a stale claim without a task is taken over: the retry creates the task', async () => {
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    const body = { model: 'pic', prompt: 'died before commit' };
    const fingerprint = createHash('sha256')
      .update(`/v1/pic/images\n${JSON.stringify(body)}`)
      .digest('base64url');
    await h.store.idempotency.begin(keyId, 'died-early', fingerprint, Date.now() - 5 * 60_000, 0, 0);
    const before = await taskCount();
    const retry = await post('/v1/pic/images', body, 'died-early');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await taskCount()).toBe(before + 1);
  });

  it('records older than 24 hours no longer count', async () => {
    const s = h.store.idempotency;
    const day = 24 * 3_600_000;
    expect(await s.begin('key_x', 'old', 'f1', 1000, 0, 0)).toEqual({ state: 'new' });
    await s.complete('key_x', 'old', 200, '{"id":"t"}');
    expect(await s.begin('key_x', 'old', 'f1', 2000, 0, 0)).toEqual({ state: 'replay', statusCode: 200, response: '{"id":"t"}' });
    expect(await s.begin('key_x', 'old', 'f2', 1000 + day + 1, 0, 1001)).toEqual({ state: 'new' });
    expect(await s.purge(Date.now())).toBeGreaterThan(0);
  });
});
