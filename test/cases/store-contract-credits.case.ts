/**
 * Store contract, credits (G200-G205): accounts, the append-only ledger, holds written with the
 * tasks, settlement inside the terminal conditional update (exactly once, whatever races), chat
 * holds, and reconcile.
 */
import { describe, expect, it } from 'vitest';
import { cancelTask, completeTask, failLapsedTask, failTask, requeueTask } from '../../src/tasks/states.js';
import type { InsertRefusal, NewTask, Store, TaskRecord } from '../../src/store/types.js';
import { MINUTE, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask } from '../helpers/task-rows.js';

const C = 1_000_000; // one credit in micro-credits
const ENFORCE = { maxInFlight: 0, enforceCredits: true };
const inserted = (r: TaskRecord | InsertRefusal): r is TaskRecord => !('refused' in r);

/** A `pic` task of `key_a` holding `credits` of account `acct_a`. */
const charged = (credits: number, over: Partial<NewTask> = {}): NewTask =>
  newTask({ charge: { accountId: 'acct_a', holdMicro: credits * C, perSecondMicro: null }, ...over });

async function account(store: Store, credits: number, id = 'acct_a'): Promise<void> {
  await store.credits.createAccount({ id, name: `account ${id}`, createdAt: T, startingMicro: credits * C });
}

async function settlements(store: Store, taskId: string): Promise<string[]> {
  return (await store.credits.ledger('acct_a')).filter((e) => e.taskId === taskId && e.kind !== 'hold').map((e) => e.kind);
}

async function expectReconciled(store: Store): Promise<void> {
  const report = await store.credits.reconcile();
  expect(report.mismatched).toEqual([]);
  expect(report.unsettled).toEqual([]);
  expect(report.doubled).toEqual([]);
}

export function creditsContract(open: OpenStore): void {
  describe('credits: accounts, grants and the ledger', () => {
    const s = useStore(open);

    it('an account starts with its starting grant; grants and adjustments move its balance, each an entry', async () => {
      const store = s();
      await account(store, 10);
      expect(await store.credits.getAccount('acct_a')).toEqual({
        id: 'acct_a',
        name: 'account acct_a',
        createdAt: T,
        availableMicro: 10 * C,
        heldMicro: 0,
        spentMicro: 0,
      });
      expect(await store.credits.grant('acct_a', 2_500_000, 'top-up', T + 1)).toMatchObject({
        granted: true,
        entry: { kind: 'grant', amountMicro: 2_500_000 },
      });
      expect(await store.credits.grant('acct_a', -500_000, 'correction', T + 2)).toMatchObject({
        granted: true,
        entry: { kind: 'adjust', amountMicro: -500_000 },
      });
      expect(await store.credits.grant('acct_missing', C, 'x', T + 3)).toEqual({ granted: false, refused: 'no_account' });
      expect((await store.credits.getAccount('acct_a'))?.availableMicro).toBe(12 * C);
      expect((await store.credits.ledger('acct_a')).map((e) => [e.kind, e.amountMicro, e.note])).toEqual([
        ['grant', 10 * C, 'starting credit'],
        ['grant', 2_500_000, 'top-up'],
        ['adjust', -500_000, 'correction'],
      ]);
      await account(store, 0, 'acct_b');
      expect((await store.credits.listAccounts()).map((a) => [a.id, a.availableMicro])).toEqual([
        ['acct_a', 12 * C],
        ['acct_b', 0],
      ]);
      expect(await store.credits.ledger('acct_b')).toEqual([]);
      await expectReconciled(store);
    });

    it('a key inserted with a new account creates it in the same call; the key names its account', async () => {
      const store = s();
      const key = { id: 'key_n', name: 'n', accountId: 'acct_n', prefix: 'mg_nnnnn', createdAt: T, revokedAt: null, hash: 'hash-n' };
      await store.keys.insert(key, { id: 'acct_n', name: 'n', createdAt: T, startingMicro: 3 * C });
      expect((await store.keys.findActiveByHash('hash-n'))?.accountId).toBe('acct_n');
      expect((await store.credits.getAccount('acct_n'))?.availableMicro).toBe(3 * C);
      await store.keys.insert({ ...key, id: 'key_m', hash: 'hash-m' }); // a second key of the same account
      expect((await store.keys.findActiveByHash('hash-m'))?.accountId).toBe('acct_n');
    });
  });

  describe('credits: holds written with the tasks (insertWithinBound)', () => {
    const s = useStore(open);

    it("holds each inserted task's price; with enforcement, leaves out a task its account cannot cover (holds before it in the call counted)", async () => {
      const store = s();
      await account(store, 5);
      const batch = [charged(2), charged(2), charged(2), charged(1)];
      const records = await store.tasks.insertWithinBound(batch, ENFORCE);
      expect(records.map((r) => ('refused' in r ? r : r.id))).toEqual([batch[0]!.id, batch[1]!.id, { refused: 'credits', availableMicro: C }, batch[3]!.id]);
      expect(await store.tasks.get(batch[2]!.id)).toBeUndefined();
      expect((await store.tasks.get(batch[0]!.id))?.charge).toEqual({ accountId: 'acct_a', holdMicro: 2 * C, perSecondMicro: null });
      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 0, heldMicro: 5 * C, spentMicro: 0 });
      expect((await store.credits.ledger('acct_a')).filter((e) => e.kind === 'hold').map((e) => [e.taskId, e.amountMicro, e.model])).toEqual([
        [batch[0]!.id, 2 * C, 'pic'],
        [batch[1]!.id, 2 * C, 'pic'],
        [batch[3]!.id, C, 'pic'],
      ]);
      expect((await store.credits.reconcile()).open).toBe(3);
      await expectReconciled(store);
    });

    it('without enforcement every task is held, the balance going below zero', async () => {
      const store = s();
      await account(store, 1);
      const records = await store.tasks.insertWithinBound([charged(2), charged(2)], { maxInFlight: 0, enforceCredits: false });
      expect(records.filter(inserted)).toHaveLength(2);
      expect((await store.credits.getAccount('acct_a'))?.availableMicro).toBe(-3 * C);
      await expectReconciled(store);
    });

    it('a batch of several tasks per account and key refuses exactly where one call per task would; the totals match (G407)', async () => {
      const store = s();
      // two identical worlds: the batch's (acct_a, acct_c) and the one-by-one's (acct_b, acct_d)
      const worlds = [
        { big: 'acct_a', small: 'acct_c', capped: 'key_a1', open: 'key_a2', smallKey: 'key_c' },
        { big: 'acct_b', small: 'acct_d', capped: 'key_b1', open: 'key_b2', smallKey: 'key_d' },
      ];
      for (const w of worlds) {
        await account(store, 7, w.big);
        await account(store, 3, w.small);
        for (const [id, accountId] of [
          [w.capped, w.big],
          [w.open, w.big],
          [w.smallKey, w.small],
        ] as const)
          await store.keys.insert({ id, name: id, accountId, prefix: `mg_${id}`, createdAt: T, revokedAt: null, hash: `hash-${id}` });
        expect(await store.keys.setSpendCap(w.capped, 4 * C)).toBe(true);
      }
      type Who = 'capped' | 'open' | 'smallKey';
      const plan: Array<[Who, number]> = [
        ['capped', 2],
        ['open', 2],
        ['capped', 3], // the key's cap: 2 + 3 > 4
        ['smallKey', 2],
        ['capped', 2],
        ['open', 2], // the account's balance: 1 left
        ['smallKey', 2], // the small account's: 1 left
        ['capped', 1], // the cap again: 4 used
        ['open', 1],
        ['smallKey', 1],
        ['open', 0.5], // nothing left
      ];
      const tasksOf = (w: (typeof worlds)[number]): NewTask[] =>
        plan.map(([who, credits], i) =>
          newTask({
            ownerKeyId: w[who],
            createdAt: T + i,
            charge: { accountId: who === 'smallKey' ? w.small : w.big, holdMicro: credits * C, perSecondMicro: null },
          }),
        );
      const refusalsOf = (records: Array<TaskRecord | InsertRefusal>) => records.map((r) => ('refused' in r ? r : 'inserted'));
      const batched = refusalsOf(await store.tasks.insertWithinBound(tasksOf(worlds[0]!), ENFORCE));
      const single: Array<InsertRefusal | 'inserted'> = [];
      for (const t of tasksOf(worlds[1]!)) single.push(...refusalsOf(await store.tasks.insertWithinBound([t], ENFORCE)));
      expect(batched).toEqual([
        'inserted',
        'inserted',
        { refused: 'key_cap', capMicro: 4 * C, usedMicro: 2 * C },
        'inserted',
        'inserted',
        { refused: 'credits', availableMicro: C },
        { refused: 'credits', availableMicro: C },
        { refused: 'key_cap', capMicro: 4 * C, usedMicro: 4 * C },
        'inserted',
        'inserted',
        { refused: 'credits', availableMicro: 0 },
      ]);
      expect(single).toEqual(batched);
      const totals = async (id: string) => {
        const a = await store.credits.getAccount(id);
        return [a?.availableMicro, a?.heldMicro, a?.spentMicro];
      };
      expect(await totals('acct_a')).toEqual([0, 7 * C, 0]);
      expect(await totals('acct_c')).toEqual([0, 3 * C, 0]);
      expect(await totals('acct_b')).toEqual(await totals('acct_a'));
      expect(await totals('acct_d')).toEqual(await totals('acct_c'));
      // the keys' totals: what the capped key has used shows in its next refusal, in both worlds
      for (const w of worlds) {
        await store.credits.grant(w.big, 5 * C, 'top-up', T + 100);
        expect(refusalsOf(await store.tasks.insertWithinBound(tasksOf(w).slice(0, 1), ENFORCE))).toEqual([
          { refused: 'key_cap', capMicro: 4 * C, usedMicro: 4 * C },
        ]);
      }
      expect((await store.credits.reconcile()).keysMismatched).toEqual([]);
      await expectReconciled(store);
    });

    it('concurrent batches against a balance covering exactly half: exactly half are inserted, the balance ends at zero', async () => {
      const store = s();
      await account(store, 40);
      const calls = Array.from({ length: 20 }, (_, i) =>
        store.tasks.insertWithinBound(
          Array.from({ length: 4 }, (_, j) => charged(1, { createdAt: T + 4 * i + j })),
          ENFORCE,
        ),
      );
      const results = (await Promise.all(calls)).flat();
      expect(results.filter(inserted)).toHaveLength(40);
      expect(results.filter((r) => !inserted(r))).toHaveLength(40);
      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 0, heldMicro: 40 * C });
      await expectReconciled(store);
    });
  });

  describe("credits: a key's spending cap (G207)", () => {
    const s = useStore(open);

    it('holds and charges of a capped key stay within its cap; a release makes room again; the books include each key', async () => {
      const store = s();
      await account(store, 10);
      await store.keys.insert({ id: 'key_cap', name: 'capped', accountId: 'acct_a', prefix: 'mg_capca', createdAt: T, revokedAt: null, hash: 'hash-cap' });
      expect(await store.keys.setSpendCap('key_cap', 3 * C)).toBe(true);
      expect(await store.keys.setSpendCap('key_missing', C)).toBe(false);
      expect((await store.keys.findActiveByHash('hash-cap'))?.spendCapMicro).toBe(3 * C);
      const batch = [1, 1, 1, 1].map((n, i) => charged(n, { ownerKeyId: 'key_cap', createdAt: T + i }));
      const records = await store.tasks.insertWithinBound(batch, ENFORCE);
      expect(records.filter(inserted)).toHaveLength(3);
      expect(records[3]).toEqual({ refused: 'key_cap', capMicro: 3 * C, usedMicro: 3 * C });
      // without enforcement the cap is recorded, not applied
      expect(
        (await store.tasks.insertWithinBound([charged(1, { ownerKeyId: 'key_cap' })], { maxInFlight: 0, enforceCredits: false })).filter(inserted),
      ).toHaveLength(1);
      const first = (await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE))!;
      await completeTask(store.tasks, first, 'w1', { files: [] }, T + DAY_MS);
      const second = (await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE))!;
      await failTask(store.tasks, second, 'w1', '[fail]', null);
      // used: 1 charged + 2 held = 3 of 3
      const hold = (requestId: string, credits: number) =>
        store.credits.holdRequest({ accountId: 'acct_a', keyId: 'key_cap', requestId, model: 'chat-x', amountMicro: credits * C, createdAt: T }, true);
      expect(await hold('req_c1', 1)).toEqual({ refused: 'key_cap', capMicro: 3 * C, usedMicro: 3 * C });
      expect(await store.keys.setSpendCap('key_cap', 4 * C)).toBe(true);
      expect(await hold('req_c2', 1)).toEqual({ held: true });
      await store.credits.settleRequest('req_c2', 500_000, T + 1);
      expect(await store.keys.setSpendCap('key_cap', null)).toBe(true);
      expect(await hold('req_c3', 5)).toEqual({ held: true }); // no cap: the account's balance only
      const report = await store.credits.reconcile();
      expect(report.keysMismatched).toEqual([]);
      await expectReconciled(store);
    });
  });

  describe('credits: settlement in the terminal transition, exactly once', () => {
    const s = useStore(open);

    async function started(store: Store, credits = 2, over: Partial<NewTask> = {}): Promise<TaskRecord> {
      const task = charged(credits, over);
      await store.tasks.insertWithinBound([task], ENFORCE);
      const claimed = await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      expect(claimed?.id).toBe(task.id);
      return claimed!;
    }

    it('completed: the hold is captured; failed, cancelled (queued and running), a lapsed lease with no attempts left: released', async () => {
      const store = s();
      await account(store, 100);
      const done = await started(store);
      expect(await completeTask(store.tasks, done, 'w1', { files: [] }, T + DAY_MS)).toBeDefined();
      expect(await settlements(store, done.id)).toEqual(['capture']);

      const failed = await started(store);
      expect(await failTask(store.tasks, failed, 'w1', '[fail]', null)).toBeDefined();
      expect(await settlements(store, failed.id)).toEqual(['release']);

      const queued = charged(2);
      await store.tasks.insertWithinBound([queued], ENFORCE);
      expect(await cancelTask(store.tasks, (await store.tasks.get(queued.id))!, null)).toBeDefined();
      expect(await settlements(store, queued.id)).toEqual(['release']);

      const running = await started(store);
      expect(await cancelTask(store.tasks, running, null)).toBeDefined();
      expect(await completeTask(store.tasks, running, 'w1', { files: [] }, T)).toBeUndefined(); // the late result moves nothing
      expect(await settlements(store, running.id)).toEqual(['release']);

      const lapsed = await started(store);
      expect(await failLapsedTask(store.tasks, lapsed, 'lease lapsed', null, T + 2 * MINUTE)).toBeDefined();
      expect(await settlements(store, lapsed.id)).toEqual(['release']);

      // a retry moves nothing; the hold stays until the task ends
      const flaky = await started(store);
      const again = await requeueTask(store.tasks, flaky, 'w1', T);
      expect(again?.status).toBe('queued');
      expect(await settlements(store, flaky.id)).toEqual([]);
      const second = (await store.tasks.claimNext(['sandbox'], 'w2', T + 1, T + MINUTE))!;
      await completeTask(store.tasks, second, 'w2', { files: [] }, T + DAY_MS);
      expect(await settlements(store, flaky.id)).toEqual(['capture']);

      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 96 * C, heldMicro: 0, spentMicro: 4 * C });
      const report = await store.credits.reconcile();
      expect(report.open).toBe(0);
      await expectReconciled(store);
    });

    it('racing terminal transitions (cancel against completion, two lapsed-lease sweeps) settle once', async () => {
      const store = s();
      await account(store, 100);
      for (let i = 0; i < 5; i++) {
        const task = await started(store);
        const outcomes = await Promise.all([
          completeTask(store.tasks, task, 'w1', { files: [] }, T + DAY_MS),
          cancelTask(store.tasks, task, null),
          failLapsedTask(store.tasks, task, 'lapsed', null, T + 2 * MINUTE),
          failLapsedTask(store.tasks, task, 'lapsed', null, T + 2 * MINUTE),
        ]);
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        expect(await settlements(store, task.id)).toHaveLength(1);
      }
      expect((await store.credits.getAccount('acct_a'))?.heldMicro).toBe(0);
      await expectReconciled(store);
    });

    it('per-second models settle to the length produced, never above the hold', async () => {
      const store = s();
      await account(store, 100);
      const short = await started(store, 10, { charge: { accountId: 'acct_a', holdMicro: 10 * C, perSecondMicro: 2 * C } });
      await completeTask(store.tasks, short, 'w1', { files: [], actualDuration: 3.2 }, T + DAY_MS);
      const entries = (await store.credits.ledger('acct_a')).filter((e) => e.taskId === short.id);
      expect(entries.map((e) => [e.kind, e.amountMicro, e.settledMicro])).toEqual([
        ['hold', 10 * C, null],
        ['capture', 6_400_000, 10 * C],
      ]);
      const long = await started(store, 10, { charge: { accountId: 'acct_a', holdMicro: 10 * C, perSecondMicro: 2 * C } });
      await completeTask(store.tasks, long, 'w1', { files: [], actualDuration: 9 }, T + DAY_MS);
      expect((await store.credits.ledger('acct_a')).find((e) => e.taskId === long.id && e.kind === 'capture')?.amountMicro).toBe(10 * C);
      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 100 * C - 16_400_000, heldMicro: 0, spentMicro: 16_400_000 });
      await expectReconciled(store);
    });

    it('a task without a hold (stored before credits) finishes without a ledger entry', async () => {
      const store = s();
      const task = newTask();
      await insertTask(store.tasks, task);
      const claimed = (await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE))!;
      expect(claimed.charge).toBeNull();
      expect(await completeTask(store.tasks, claimed, 'w1', { files: [] }, T + DAY_MS)).toBeDefined();
      await expectReconciled(store);
    });
  });

  describe('credits: chat request holds', () => {
    const s = useStore(open);

    it('holds an estimate (refused beyond the balance when enforced), settles once to what was used, never above the hold', async () => {
      const store = s();
      await account(store, 3);
      const hold = (requestId: string, credits: number, enforce = true) =>
        store.credits.holdRequest({ accountId: 'acct_a', keyId: 'key_a', requestId, model: 'chat-x', amountMicro: credits * C, createdAt: T }, enforce);
      expect(await hold('req_1', 2)).toEqual({ held: true });
      expect(await hold('req_2', 2)).toEqual({ refused: 'credits', availableMicro: C });
      expect(await store.credits.settleRequest('req_1', 1_250_000, T + 1)).toBe(true);
      expect(await store.credits.settleRequest('req_1', 2 * C, T + 2)).toBe(false); // settled already
      expect(await store.credits.settleRequest('req_unknown', C, T + 2)).toBe(false);
      expect(await hold('req_3', 1)).toEqual({ held: true });
      expect(await store.credits.settleRequest('req_3', 50 * C, T + 3)).toBe(true); // charged the hold at most
      expect(await hold('req_4', 1)).toEqual({ refused: 'credits', availableMicro: 750_000 });
      expect(await hold('req_5', 1, false)).toEqual({ held: true });
      expect(await store.credits.settleRequest('req_5', 0, T + 4)).toBe(true); // nothing generated: released
      expect((await store.credits.ledger('acct_a')).filter((e) => e.requestId).map((e) => [e.requestId, e.kind, e.amountMicro])).toEqual([
        ['req_1', 'hold', 2 * C],
        ['req_1', 'capture', 1_250_000],
        ['req_3', 'hold', C],
        ['req_3', 'capture', C],
        ['req_5', 'hold', C],
        ['req_5', 'release', C],
      ]);
      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 750_000, heldMicro: 0, spentMicro: 2_250_000 });
      expect(await store.credits.usage('acct_a', T)).toEqual([{ model: 'chat-x', settled: 3, spentMicro: 2_250_000 }]);
      await expectReconciled(store);
    });

    it('releaseStaleRequests releases the unsettled holds made before the bound, once; a late settlement then moves nothing', async () => {
      const store = s();
      await account(store, 10);
      const hold = (requestId: string, createdAt: number) =>
        store.credits.holdRequest({ accountId: 'acct_a', keyId: 'key_a', requestId, model: 'chat-x', amountMicro: 2 * C, createdAt }, true);
      await hold('req_old', T);
      await hold('req_settled', T + 1);
      await hold('req_new', T + 10);
      await store.credits.settleRequest('req_settled', C, T + 2);
      expect(await store.credits.releaseStaleRequests(T + 5, T + 20)).toBe(1);
      expect(await store.credits.releaseStaleRequests(T + 5, T + 21)).toBe(0);
      expect(await store.credits.settleRequest('req_old', C, T + 22)).toBe(false);
      expect((await store.credits.ledger('acct_a')).filter((e) => e.requestId === 'req_old').map((e) => [e.kind, e.amountMicro, e.createdAt])).toEqual([
        ['hold', 2 * C, T],
        ['release', 2 * C, T + 20],
      ]);
      expect(await store.credits.getAccount('acct_a')).toMatchObject({ availableMicro: 7 * C, heldMicro: 2 * C, spentMicro: C });
      expect((await store.credits.reconcile()).open).toBe(1);
      await expectReconciled(store);
    });

    it('concurrent settlements of one request: one wins', async () => {
      const store = s();
      await account(store, 3);
      await store.credits.holdRequest({ accountId: 'acct_a', keyId: 'key_a', requestId: 'req_r', model: 'chat-x', amountMicro: 2 * C, createdAt: T }, true);
      const wins = await Promise.all(Array.from({ length: 6 }, (_, i) => store.credits.settleRequest('req_r', (i + 1) * 100_000, T + 1)));
      expect(wins.filter(Boolean)).toHaveLength(1);
      await expectReconciled(store);
    });
  });
}

const DAY_MS = 86_400_000;
