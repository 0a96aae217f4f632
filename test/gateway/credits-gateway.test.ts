/**
 * Credits through the gateway (G200-G204), with MEDIAGATE_CREDITS=on: holds written with the
 * submits (a burst never overdraws), the 402 in each family's error body, idempotent replays of a
 * 402, settlement on every terminal path, and GET /v1/account. Runs on SQLite and (postgres-e2e)
 * on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { claimNextTask } from '../../src/tasks/states.js';
import type { LedgerEntry } from '../../src/store/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

const C = 1_000_000;
const json = { 'content-type': 'application/json' };

async function accountOf(h: Harness, key = h.key): Promise<string> {
  return (await h.store.keys.findActiveByHash(hashApiKey(key)))!.accountId;
}

const pic = (h: Harness, prompt: string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: { ...h.auth(), ...headers }, payload: { model: 'pic', prompt } });

/** Each task's settlements (captures and releases), by task id. */
function settlementsByTask(entries: LedgerEntry[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of entries) {
    if (!e.taskId || e.kind === 'hold') continue;
    out.set(e.taskId, [...(out.get(e.taskId) ?? []), e.kind]);
  }
  return out;
}

describe('credits enforced at submit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false, env: { MEDIAGATE_CREDITS: 'on' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('1,000 concurrent submits against a balance covering exactly 500: exactly 500 accepted, the balance never below zero', async () => {
    const account = await accountOf(h);
    await h.store.credits.grant(account, 500 * C, 'burst test', Date.now());
    let done = false;
    const samples: number[] = [];
    const sampler = (async () => {
      while (!done) {
        samples.push((await h.store.credits.getAccount(account))!.availableMicro);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => pic(h, `burst ${i}`)));
    done = true;
    await sampler;
    const codes = replies.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(500);
    expect(codes.filter((c) => c === 402)).toHaveLength(500);
    const refused = body(replies.find((r) => r.statusCode === 402)!);
    expect(refused.error).toMatchObject({ type: 'billing_error', code: 'insufficient_credits', param: null });
    expect(refused.error.message).toMatch(/costs 1 credits and the account has 0 available/);
    expect(samples.length).toBeGreaterThan(1);
    expect(samples.every((n) => n >= 0)).toBe(true);
    expect(await h.store.credits.getAccount(account)).toMatchObject({ availableMicro: 0, heldMicro: 500 * C, spentMicro: 0 });
    // every accepted task is stored with its hold; nothing was created for a refused one
    const holds = (await h.store.credits.ledger(account)).filter((e) => e.kind === 'hold');
    expect(holds).toHaveLength(500);
    const accepted = replies.filter((r) => r.statusCode === 200).map((r) => body(r).id as string);
    expect(new Set(holds.map((e) => e.taskId))).toEqual(new Set(accepted));
    const counts = await countTasksByStatus(h.store.tasks);
    expect(counts.queued).toBe(500);
    const report = await h.store.credits.reconcile();
    expect(report).toMatchObject({ mismatched: [], unsettled: [], doubled: [], open: 500 });
  });

  it('a submit its account cannot pay is refused before its media are fetched', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: h.auth(h.otherKey),
      payload: { model: 'pic', prompt: 'with media', image_urls: ['http://127.0.0.1:9/never-fetched.png'] }, // nothing listens there: a fetch would be a 400
    });
    expect(res.statusCode).toBe(402);
    expect(body(res).error.code).toBe('insufficient_credits');
  });

  it("the 402 comes in the family's error body: videos create answers {code, msg, data}", async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/videos/videos',
      headers: { ...h.auth(h.otherKey), ...json },
      payload: JSON.stringify({ model: 'videos', prompt: 'a fox', duration: 5 }),
    });
    expect(res.statusCode).toBe(402);
    expect(body(res)).toEqual({ code: '402', msg: expect.stringMatching(/costs 10 credits and the account has 0 available/), data: null });
  });

  it('a replay of a 402 under its Idempotency-Key stays a 402 after a grant; a new key is accepted', async () => {
    const account = await accountOf(h, h.otherKey);
    const send = (idem: string) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: { ...h.auth(h.otherKey), 'idempotency-key': idem },
        payload: { model: 'pic', prompt: 'replayed' },
      });
    const first = await send('idem-402');
    expect(first.statusCode).toBe(402);
    await h.store.credits.grant(account, 5 * C, 'after the refusal', Date.now());
    const replay = await send('idem-402');
    expect(replay.statusCode).toBe(402);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect((await send('idem-new')).statusCode).toBe(200);
    expect((await h.store.credits.getAccount(account))?.availableMicro).toBe(4 * C);
  });

  it('a cancel while running and while queued releases the hold once; a repeated cancel moves nothing', async () => {
    const account = await accountOf(h, h.otherKey);
    const motion = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/motion/videos',
        headers: { ...h.auth(h.otherKey), ...json },
        payload: JSON.stringify({ model: 'motion_2_0_fast', content: [{ type: 'text', text: 'a fox' }] }),
      });
    expect((await motion()).statusCode).toBe(402); // 8 credits, 4 available
    await h.store.credits.grant(account, 12 * C, 'for two motion tasks', Date.now());
    const before = (await h.store.credits.getAccount(account))!;
    const running = body(await motion()).id as string;
    // claimed by a worker of the test's own (keys take turns: the other key's backlog does not hold it back long)
    await waitFor(
      async () => {
        const claimed = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
        return claimed?.id === running ? claimed : undefined;
      },
      15_000,
      'the motion task to be claimed',
    );
    const queued = body(await motion()).id as string;
    expect((await h.store.credits.getAccount(account))?.availableMicro).toBe(0);
    for (const id of [running, queued, running, queued]) {
      const res = await h.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: h.auth(h.otherKey) });
      expect(res.statusCode).toBe(200);
    }
    const settled = settlementsByTask(await h.store.credits.ledger(account));
    expect(settled.get(queued)).toEqual(['release']);
    expect(settled.get(running)).toEqual(['release']);
    expect(await h.store.credits.getAccount(account)).toMatchObject({ availableMicro: before.availableMicro, spentMicro: before.spentMicro });
  });
});

describe('credits settled by the engine', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { MEDIAGATE_CREDITS: 'on' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('completed is captured, [fail] released, [flaky] (retried, then completed) captured once; GET /v1/account shows it', async () => {
    const account = await accountOf(h);
    await h.store.credits.grant(account, 10 * C, 'engine test', Date.now());
    const ids: Record<string, string> = {};
    for (const prompt of ['plain', 'a [fail] one', 'a [flaky] one']) {
      const res = await pic(h, prompt);
      expect(res.statusCode).toBe(200);
      ids[prompt] = body(res).id as string;
    }
    const finished = await Promise.all(Object.values(ids).map((id) => h.waitForTask(id, ['completed', 'failed', 'cancelled'], 20_000)));
    expect(finished.map((t) => t.status)).toEqual(['completed', 'failed', 'completed']);
    expect(finished[2]!.attempts).toBe(2);
    const settled = settlementsByTask(await h.store.credits.ledger(account));
    expect(settled.get(ids.plain!)).toEqual(['capture']);
    expect(settled.get(ids['a [fail] one']!)).toEqual(['release']);
    expect(settled.get(ids['a [flaky] one']!)).toEqual(['capture']);
    expect(await h.store.credits.reconcile()).toMatchObject({ mismatched: [], unsettled: [], doubled: [], open: 0 });

    const res = await h.app.inject({ method: 'GET', url: '/v1/account', headers: h.auth() });
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({
      account: { id: account, name: 'alice' },
      balance: 8,
      held: 0,
      spent: 2,
      usage: [{ model: 'pic', settled: 3, spent: 2 }],
      period: { since: expect.any(Number), days: 30 },
    });
    // a spending cap of the key (G207): 2 spent, 2.5 allowed
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    await h.store.keys.setSpendCap(keyId, 2_500_000);
    const capped = await pic(h, 'over the cap');
    expect(capped.statusCode).toBe(402);
    expect(body(capped).error.message).toBe(
      "Not enough credits: this request costs 1 credits and this API key's spending cap of 2.5 credits has 0.5 left; ask the operator to raise it",
    );
    await h.store.keys.setSpendCap(keyId, null);
    expect((await pic(h, 'no cap')).statusCode).toBe(200);

    const bad = await h.app.inject({ method: 'GET', url: '/v1/account?days=0', headers: h.auth() });
    expect(bad.statusCode).toBe(400);
    expect((await h.app.inject({ method: 'GET', url: '/v1/account' })).statusCode).toBe(401);
  });
});
