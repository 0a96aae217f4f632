/**
 * `/admin/v1/tasks` through HTTP (G317-G320, G325): every tenant's tasks with filters and pages; one
 * task with its key and account, the request as accepted, its attempts and timeline after a retry,
 * its hold and settlement; the operator's cancel (200, and 409 for a finished task or a provider
 * that cannot stop a generation), audited; role boundaries; bad input 400 naming the field; 404s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { Provider } from '../../src/providers/types.js';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';

const PNG = { files: [{ name: 'out.png', contentType: 'image/png', data: Buffer.from('png') }] };

/** `flaky` fails each task's first attempt (a retryable upstream error), then makes an image. */
const flaky: Provider = {
  id: 'flaky',
  capabilities: { families: ['pic'] },
  async start(job) {
    if (job.attempt === 1) throw new AppError('upstream_error', 'the upstream answered 502', { retryable: true });
    return { state: 'done', output: PNG };
  },
};
/** `stuck` never ends a generation and cannot stop one. */
const stuck: Provider = {
  id: 'stuck',
  capabilities: { families: ['pic'] },
  start: (_job, ctx) =>
    new Promise((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    }),
};
/** `held` runs until cancelled, and can stop. */
const held: Provider = { ...stuck, id: 'held', capabilities: { families: ['pic'] }, cancel: async () => undefined };

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(
    await createHarness(
      adminOptions({
        workers: true,
        env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_STARTING_CREDITS: '100' },
        backoffScale: 0.05, // the retried task's record is the point, not when its retry comes (G278)
        providers: [flaky, stuck, held],
        routes: {
          'pic-2': [{ provider: 'flaky', priority: 0, weight: 1 }],
          'pic-pro-stable': [{ provider: 'stuck', priority: 0, weight: 1 }],
          'pic-pro': [{ provider: 'held', priority: 0, weight: 1 }],
        },
      }),
    ),
  );
});
afterAll(async () => {
  await h.close();
});

async function submit(secret: string, model: string): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(secret), payload: { model, prompt: 'a lighthouse' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { id: string }).id;
}

describe('admin tasks', () => {
  it('a task retried once: its attempts, timeline, hold and capture, key and account, the request as accepted', async () => {
    const k = await h.newKey({ name: 'retried' });
    const id = await submit(k.secret, 'pic-2');
    await h.waitForTask(id, ['completed'], 15_000);
    const res = await h.admin('GET', `/admin/v1/tasks/${id}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const t = res.json;
    expect(t).toMatchObject({
      id,
      object: 'admin_task',
      key_id: k.id,
      account_id: k.record.account_id,
      family: 'pic',
      model: 'pic-2',
      provider: 'flaky',
      status: 'completed',
      attempt_count: 2,
    });
    expect(t.view).toMatchObject({ id, status: 'completed' });
    expect(t.request).toMatchObject({ params: expect.objectContaining({ prompt: 'a lighthouse' }) });
    expect(t.timeline.map((e: { from: string | null; status: string }) => `${e.from ?? ''}>${e.status}`)).toEqual([
      '>queued',
      'queued>processing',
      'processing>queued',
      'queued>processing',
      'processing>completed',
    ]);
    expect(t.timeline[2].error).toMatch(/502/);
    expect(t.attempts).toEqual([
      { attempt: 1, provider: 'flaky', started: expect.any(Number), ended: expect.any(Number), outcome: 'requeued', error: expect.stringMatching(/502/) },
      { attempt: 2, provider: 'flaky', started: expect.any(Number), ended: expect.any(Number), outcome: 'completed', error: null },
    ]);
    expect(t.hold).toEqual({ amount: expect.any(Number), settlement: { kind: 'capture', amount: t.hold.amount, created: expect.any(Number) } });
    expect(t.ledger.map((e: { kind: string }) => e.kind)).toEqual(['hold', 'capture']);
    expect(t.webhooks).toEqual([]);
  });

  it("lists every tenant's tasks newest first, filtered, in pages; a cursor with other filters is a 400 naming it", async () => {
    const a = await h.newKey({ name: 'list-a' });
    const b = await h.newKey({ name: 'list-b' });
    const ids = [await submit(a.secret, 'pic-2'), await submit(b.secret, 'pic-2'), await submit(a.secret, 'pic-2')];
    for (const id of ids) await h.waitForTask(id, ['completed'], 15_000);
    const ofA = (await h.admin('GET', `/admin/v1/tasks?key_id=${a.id}`)).json;
    expect(ofA.data.map((t: { id: string }) => t.id).sort()).toEqual([ids[0], ids[2]].sort());
    expect((await h.admin('GET', `/admin/v1/tasks?account_id=${b.record.account_id}`)).json.data.map((t: { id: string }) => t.id)).toEqual([ids[1]]);
    const first = (await h.admin('GET', '/admin/v1/tasks?provider=flaky&status=completed&family=pic&model=pic-2&limit=2')).json;
    expect(first).toMatchObject({ object: 'list', has_more: true });
    const second = (await h.admin('GET', `/admin/v1/tasks?provider=flaky&status=completed&family=pic&model=pic-2&limit=2&cursor=${first.next_cursor}`)).json;
    const seen = [...first.data, ...second.data].map((t: { id: string }) => t.id);
    expect(new Set(seen).size).toBe(seen.length);
    const bad = await h.admin('GET', `/admin/v1/tasks?provider=stuck&limit=2&cursor=${first.next_cursor}`);
    expect([bad.status, bad.json.error.param]).toEqual([400, 'cursor']);
    const now = Math.floor(Date.now() / 1000) + 5;
    expect((await h.admin('GET', `/admin/v1/tasks?key_id=${a.id}&created_after=${now}`)).json.data).toEqual([]);
    expect((await h.admin('GET', `/admin/v1/tasks?key_id=${a.id}&created_before=${now}`)).json.data).toHaveLength(2);
  });

  it.each([
    ['status=done', 'status'],
    ['family=song', 'family'],
    ['created_after=yesterday', 'created_after'],
    ['created_before=1e9', 'created_before'],
    ['limit=0', 'limit'],
    ['cursor=!!', 'cursor'],
    ['owner=x', 'owner'],
  ])('?%s is a 400 naming %s', async (query, param) => {
    const res = await h.admin('GET', `/admin/v1/tasks?${query}`);
    expect([res.status, res.json.error?.param]).toEqual([400, param]);
  });

  it('unknown ids are 404 task_not_found; caller keys get 403 admin_only; no key 401', async () => {
    for (const [method, url] of [
      ['GET', '/admin/v1/tasks/task_none'],
      ['POST', '/admin/v1/tasks/task_none/cancel'],
    ] as const) {
      const res = await h.admin(method, url);
      expect([res.status, res.json.error.code], url).toEqual([404, 'task_not_found']);
    }
    for (const [method, url] of [
      ['GET', '/admin/v1/tasks'],
      ['GET', '/admin/v1/tasks/x'],
      ['POST', '/admin/v1/tasks/x/cancel'],
    ] as const) {
      expect((await h.admin(method, url, undefined, h.key)).json.error.code, url).toBe('admin_only');
      expect((await h.app.inject({ method, url })).statusCode, url).toBe(401);
    }
  });

  it('cancels a running task whose provider can stop it (200, audited, its hold released); 409 for a finished task and a provider that cannot', async () => {
    const k = await h.newKey({ name: 'cancel' });
    const running = await submit(k.secret, 'pic-pro');
    await h.waitForTask(running, ['processing'], 10_000);
    expect((await h.admin('GET', `/admin/v1/tasks/${running}`)).json.cancellable).toBe(true);
    const res = await h.admin('POST', `/admin/v1/tasks/${running}/cancel`);
    expect([res.status, res.json.status], JSON.stringify(res.json)).toEqual([200, 'cancelled']);
    expect(res.json.cancellable).toBe(false); // nothing left to cancel
    expect(res.json.hold.settlement.kind).toBe('release');
    expect(res.json.timeline.at(-1)).toMatchObject({ from: 'processing', status: 'cancelled' });
    const again = await h.admin('POST', `/admin/v1/tasks/${running}/cancel`);
    expect([again.status, again.json.status]).toEqual([200, 'cancelled']);
    const audit = (await h.admin('GET', `/admin/v1/audit?action=task.cancel&target=${running}`)).json.data;
    expect(audit).toEqual([
      expect.objectContaining({ action: 'task.cancel', target: running, actor: expect.stringMatching(/./), request_id: expect.any(String) }),
    ]);

    const unstoppable = await submit(k.secret, 'pic-pro-stable');
    await h.waitForTask(unstoppable, ['processing'], 10_000);
    expect((await h.admin('GET', `/admin/v1/tasks/${unstoppable}`)).json.cancellable).toBe(false); // the console offers no cancel
    const refused = await h.admin('POST', `/admin/v1/tasks/${unstoppable}/cancel`);
    expect([refused.status, refused.json.error.code]).toEqual([409, 'invalid_task_state']);
    expect(refused.json.error.message).toMatch(/stuck/);

    const done = await submit(k.secret, 'pic-2');
    await h.waitForTask(done, ['completed'], 15_000);
    expect((await h.admin('GET', `/admin/v1/tasks/${done}`)).json.cancellable).toBe(false);
    const finished = await h.admin('POST', `/admin/v1/tasks/${done}/cancel`);
    expect([finished.status, finished.json.error.code]).toEqual([409, 'invalid_task_state']);
    expect((await h.admin('GET', `/admin/v1/audit?action=task.cancel&target=${done}`)).json.data).toEqual([]);
  });
});
