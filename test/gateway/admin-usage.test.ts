/**
 * `GET /admin/v1/usage` through HTTP (G321): the sums per bucket and group equal the ledger (credits
 * captured per account, tasks and chat alike) and the tasks (submitted, completed, cancelled,
 * images); grouped by model, key, account and provider, by hour and day; bad input 400 naming the
 * field; caller keys 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions({ workers: true, env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_STARTING_CREDITS: '1000' } })));
});
afterAll(async () => {
  await h.close();
});

type Row = Record<string, any>;
const sum = (rows: Row[], field: string): number => rows.reduce((n, r) => n + (r[field] as number), 0);
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

async function submit(secret: string, body: Record<string, unknown>, url = '/v1/pic/images'): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url, headers: h.auth(secret), payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { id: string }).id;
}

describe('usage', () => {
  it("sums per account equal the ledger's captures, and the counts equal the tasks", async () => {
    const a = await h.newKey({ name: 'usage-a' });
    const b = await h.newKey({ name: 'usage-b' });
    const done: string[] = [];
    for (let i = 0; i < 3; i++) done.push(await submit(a.secret, { model: 'pic-2', prompt: `a lighthouse ${i}` }));
    done.push(await submit(b.secret, { model: 'pic-2', prompt: 'a boat' }));
    for (const id of done) await h.waitForTask(id, ['completed'], 15_000);
    const chat = await h.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: h.auth(b.secret),
      payload: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(chat.statusCode, chat.body).toBe(200);

    const imagesOf = async (id: string): Promise<number> =>
      (await h.store.tasks.get(id))!.result!.files.filter((f) => f.contentType.startsWith('image/')).length;
    const imagesOfB = await imagesOf(done[3]!);
    // chat usage rows are written after the reply (batched at the end of the turn on SQLite)
    await waitFor(
      async () => {
        const rows = (await h.admin('GET', '/admin/v1/usage?group_by=key')).json.data as Row[];
        return sum(
          rows.filter((r) => r.group === b.id),
          'chat_requests',
        ) === 1
          ? true
          : undefined;
      },
      5_000,
      'the chat reply in the usage',
    );
    const byAccount = await h.admin('GET', '/admin/v1/usage?group_by=account&interval=day');
    expect(byAccount.status, JSON.stringify(byAccount.json)).toBe(200);
    expect(byAccount.json).toMatchObject({ object: 'usage', group_by: 'account', interval: 'day' });
    for (const key of [a, b]) {
      const rows = byAccount.json.data.filter((r: Row) => r.group === key.record.account_id);
      const ledger = (await h.admin('GET', `/admin/v1/accounts/${key.record.account_id}/ledger?limit=100`)).json.data as Row[];
      const captured = sum(
        ledger.filter((e) => e.kind === 'capture'),
        'amount',
      );
      expect(captured).toBeGreaterThan(0);
      expect(round6(sum(rows, 'credits_captured'))).toBe(round6(captured));
      expect(round6(sum(rows, 'credits_captured'))).toBe((await h.admin('GET', `/admin/v1/accounts/${key.record.account_id}`)).json.spent);
    }
    const ofA = byAccount.json.data.filter((r: Row) => r.group === a.record.account_id);
    expect([sum(ofA, 'submitted'), sum(ofA, 'completed'), sum(ofA, 'images')]).toEqual([3, 3, 3]);
    const ofB = byAccount.json.data.filter((r: Row) => r.group === b.record.account_id);
    expect([sum(ofB, 'submitted'), sum(ofB, 'completed'), sum(ofB, 'images'), sum(ofB, 'chat_requests')]).toEqual([1, 1, imagesOfB, 1]);
    const [tokens] = await h.store.usage.chatUsageByKey(b.id);
    expect([sum(ofB, 'prompt_tokens'), sum(ofB, 'completion_tokens')]).toEqual([tokens!.promptTokens, tokens!.completionTokens]);

    const byKey = (await h.admin('GET', '/admin/v1/usage?group_by=key')).json.data as Row[];
    expect(
      sum(
        byKey.filter((r) => r.group === a.id),
        'completed',
      ),
    ).toBe(3);
    const byProvider = (await h.admin('GET', '/admin/v1/usage?group_by=provider&interval=hour')).json.data as Row[];
    expect(byProvider.some((r) => r.group === 'sandbox' && r.completed >= 4)).toBe(true);
    expect(byProvider.some((r) => r.group === null && r.chat_requests >= 1)).toBe(true);
    const byModel = (await h.admin('GET', '/admin/v1/usage')).json;
    expect(byModel).toMatchObject({ group_by: 'model', interval: 'hour' });
    expect(byModel.to - byModel.from).toBe(24 * 3600);
    expect(
      sum(
        byModel.data.filter((r: Row) => r.group === 'pic-2'),
        'submitted',
      ),
    ).toBeGreaterThanOrEqual(4);
    // a range before any task: nothing
    expect((await h.admin('GET', '/admin/v1/usage?from=1000000000&to=1000003600')).json.data).toEqual([]);
  });

  it('counts cancelled tasks, and their released holds capture nothing', async () => {
    // a gateway without workers, so the task is still queued when it is cancelled (with workers it
    // may already be processing at the sandbox, which cannot stop a generation: a 409)
    const q = withAdmin(await createHarness(adminOptions({ env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_STARTING_CREDITS: '1000' } })));
    try {
      const k = await q.newKey({ name: 'usage-cancel' });
      const res = await q.app.inject({
        method: 'POST',
        url: '/api/reel/videos',
        headers: q.auth(k.secret),
        payload: { model: 'reel-2', prompt: 'a slow reel' },
      });
      expect(res.statusCode, res.body).toBe(200);
      const id = (res.json() as { id: string }).id;
      const cancelled = await q.admin('POST', `/admin/v1/tasks/${id}/cancel`);
      expect([cancelled.status, cancelled.json.status], JSON.stringify(cancelled.json)).toEqual([200, 'cancelled']);
      const rows = ((await q.admin('GET', '/admin/v1/usage?group_by=key')).json.data as Row[]).filter((r) => r.group === k.id);
      expect(sum(rows, 'submitted')).toBe(1);
      expect(sum(rows, 'cancelled')).toBe(1);
      expect(sum(rows, 'credits_captured')).toBe(0);
    } finally {
      await q.close();
    }
  });

  it.each([
    ['group_by=team', 'group_by'],
    ['interval=week', 'interval'],
    ['from=yesterday', 'from'],
    ['to=soon', 'to'],
    ['from=1700003600&to=1700000000', 'from'],
    ['from=1600000000&to=1700000000', 'from'],
    ['limit=5', 'limit'],
  ])('?%s is a 400 naming %s', async (query, param) => {
    const res = await h.admin('GET', `/admin/v1/usage?${query}`);
    expect([res.status, res.json.error?.param]).toEqual([400, param]);
  });

  it('is for admin keys only', async () => {
    expect((await h.admin('GET', '/admin/v1/usage', undefined, h.key)).json.error.code).toBe('admin_only');
  });
});
