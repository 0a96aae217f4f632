/**
 * Store contract, webhooks (G208-G215): the outbox row written by the terminal transition itself
 * (exactly once, whatever races, never for a task without a callback URL), claims that never hand
 * one delivery to two workers, the kept body, attempts, the lease, deletion with the task, and the
 * keys' secrets and default URL.
 */
import { describe, expect, it } from 'vitest';
import { cancelTask, completeTask, failLapsedTask, failTask, requeueTask } from '../../src/tasks/states.js';
import type { NewTask, Store, TaskRecord } from '../../src/store/types.js';
import { DAY, MINUTE, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask } from '../helpers/task-rows.js';

const URL_A = 'https://hooks.example.com/a';

async function key(store: Store, id = 'key_a'): Promise<void> {
  await store.keys.insert(
    { id, name: id, accountId: `acct_${id}`, prefix: 'mg_xxxxx', createdAt: T, revokedAt: null, hash: `hash-${id}` },
    { id: `acct_${id}`, name: id, createdAt: T, startingMicro: 0 },
  );
}

async function started(store: Store, over: Partial<NewTask> = { callbackUrl: URL_A }): Promise<TaskRecord> {
  const task = newTask(over);
  await insertTask(store.tasks, task);
  const claimed = await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
  expect(claimed?.id).toBe(task.id);
  return claimed!;
}

export function webhooksContract(open: OpenStore): void {
  describe('webhooks: the outbox', () => {
    const s = useStore(open);

    it('a task keeps its callback URL; its terminal transition queues one pending delivery named after the task', async () => {
      const store = s();
      await key(store);
      const task = await started(store);
      expect(task.callbackUrl).toBe(URL_A);
      expect(await store.webhooks.listForTask(task.id)).toEqual([]); // nothing before the end
      const done = await completeTask(store.tasks, task, 'w1', { files: [] }, T + MINUTE, T);
      expect(done?.status).toBe('completed');
      const [delivery, ...more] = await store.webhooks.listForTask(task.id);
      expect(more).toEqual([]);
      expect(delivery).toMatchObject({ id: `msg_${task.id}`, taskId: task.id, ownerKeyId: 'key_a', url: URL_A, status: 'pending', body: null, attempts: [] });
      expect(delivery!.nextAttemptAt).toBe(delivery!.createdAt); // due at once
    });

    it('failed and cancelled tasks queue one too; a task without a URL, and a non-terminal change, queue none', async () => {
      const store = s();
      await key(store);
      const failed = await started(store);
      await failTask(store.tasks, failed, 'w1', 'boom', null);
      const queuedCancel = newTask({ callbackUrl: URL_A });
      await insertTask(store.tasks, queuedCancel);
      await cancelTask(store.tasks, (await store.tasks.get(queuedCancel.id))!, null);
      const quiet = await started(store, {});
      expect(quiet.callbackUrl).toBeNull();
      await completeTask(store.tasks, quiet, 'w1', { files: [] }, T + MINUTE);
      const requeued = await started(store);
      await requeueTask(store.tasks, requeued, 'w1', T);
      expect((await store.webhooks.listForTask(failed.id)).map((d) => d.status)).toEqual(['pending']);
      expect(await store.webhooks.listForTask(queuedCancel.id)).toHaveLength(1);
      expect(await store.webhooks.listForTask(quiet.id)).toEqual([]);
      expect(await store.webhooks.listForTask(requeued.id)).toEqual([]);
    });

    it('racing terminal transitions (completion, cancel, two lapsed-lease sweeps) queue exactly one delivery', async () => {
      const store = s();
      await key(store);
      for (let i = 0; i < 5; i++) {
        const task = await started(store);
        const outcomes = await Promise.all([
          completeTask(store.tasks, task, 'w1', { files: [] }, T + MINUTE),
          cancelTask(store.tasks, task, null),
          failLapsedTask(store.tasks, task, 'lapsed', null, T + 2 * MINUTE),
          failLapsedTask(store.tasks, task, 'lapsed', null, T + 2 * MINUTE),
        ]);
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        expect(await store.webhooks.listForTask(task.id)).toHaveLength(1);
      }
    });

    it('claims: due deliveries only, each to one worker, leased until the given time; the body is kept once', async () => {
      const store = s();
      await key(store);
      const tasks: TaskRecord[] = [];
      for (let i = 0; i < 4; i++) {
        const task = await started(store);
        await completeTask(store.tasks, task, 'w1', { files: [] }, T + MINUTE);
        tasks.push(task);
      }
      const now = Date.now() + 1000;
      const claims = await Promise.all([1, 2, 3].map((w) => store.webhooks.claimDue(`w${w}`, now, now + MINUTE, 4)));
      const ids = claims
        .flat()
        .map((d) => d.taskId)
        .sort();
      expect(ids).toEqual(tasks.map((t) => t.id).sort()); // every one once, none twice
      expect(await store.webhooks.claimDue('w4', now, now + MINUTE, 10)).toEqual([]); // leased
      const [first] = claims.find((c) => c.length > 0)!;
      const owner = claims.findIndex((c) => c.includes(first!)) + 1;
      expect(await store.webhooks.keepBody(first!.id, 'w9', '{"x":1}')).toBeUndefined(); // not its lease
      expect(await store.webhooks.keepBody(first!.id, `w${owner}`, '{"a":1}')).toBe('{"a":1}');
      expect(await store.webhooks.keepBody(first!.id, `w${owner}`, '{"b":2}')).toBe('{"a":1}'); // the first stays
      // the lease lapses: the delivery is due again, for another worker, body kept
      const again = await store.webhooks.claimDue('w5', now + MINUTE, now + 2 * MINUTE, 10);
      expect(again.map((d) => d.id)).toContain(first!.id);
      expect(again.find((d) => d.id === first!.id)?.body).toBe('{"a":1}');
      // the first worker lost it: its attempt is not recorded
      const attempt = { at: now, statusCode: 200, error: null, durationMs: 5 };
      expect(await store.webhooks.recordAttempt(first!.id, `w${owner}`, attempt, { status: 'delivered' })).toBe(false);
    });

    it("claims go in turn across keys: each key's earliest due delivery before any key's second (G461)", async () => {
      const store = s();
      await key(store, 'key_a');
      await key(store, 'key_b');
      await key(store, 'key_c');
      // key_a's backlog is due first (a delivery is due when its task ended), key_b's and key_c's after all of it
      const finish = async (ownerKeyId: string): Promise<string> => {
        const task = await started(store, { callbackUrl: URL_A, ownerKeyId });
        await completeTask(store.tasks, task, 'w1', { files: [] }, T + DAY);
        return task.id;
      };
      const backlog: string[] = [];
      for (let i = 0; i < 5; i++) backlog.push(await finish('key_a'));
      const b = await finish('key_b');
      const c = await finish('key_c');
      const now = Date.now() + 1000;
      const first = await store.webhooks.claimDue('w1', now, now + MINUTE, 3);
      expect(first.map((d) => d.taskId).sort()).toEqual([backlog[0], b, c].sort()); // the first turn of each key
      const rest = await store.webhooks.claimDue('w2', now, now + MINUTE, 10);
      expect(rest.map((d) => d.taskId).sort()).toEqual(backlog.slice(1).sort()); // key_a's others, none twice
    });

    it('claims match the rule (by turn within the key, then by time) over keys, backlogs and times of every kind (G461, G480)', async () => {
      const store = s();
      const keys = ['key_a', 'key_b', 'key_c', 'key_d', 'key_e', 'key_f', 'key_g'];
      for (const k of keys) await key(store, k);
      // a fixed sequence: key_a a backlog, the others a few each; key_g's never due
      let seed = 7;
      const next = (n: number): number => {
        seed = (seed * 48271) % 2147483647;
        return seed % n;
      };
      const owners = [...Array(14).fill('key_a'), ...Array.from({ length: 16 }, () => keys[1 + next(5)]!), 'key_g', 'key_g'];
      const taskIds: string[] = [];
      for (const ownerKeyId of owners) {
        const task = await started(store, { callbackUrl: URL_A, ownerKeyId });
        await completeTask(store.tasks, task, 'w1', { files: [] }, T + DAY);
        taskIds.push(task.id);
      }
      // each delivery its own time (none equal, so the order is total): key_a's backlog 1..14, the
      // others' 15..30, each range shuffled; key_g's after every claim
      const base = Date.now() + 1000;
      const all = await store.webhooks.claimDue('w0', base, base + 1, 100);
      expect(all).toHaveLength(owners.length);
      const shuffled = (from: number, to: number): number[] => {
        const list = Array.from({ length: to - from + 1 }, (_, i) => from + i);
        for (let i = list.length - 1; i > 0; i--) {
          const j = next(i + 1);
          [list[i], list[j]] = [list[j]!, list[i]!];
        }
        return list;
      };
      const backlogTimes = shuffled(1, 14);
      const otherTimes = shuffled(15, 30);
      for (const d of all) {
        const at = d.ownerKeyId === 'key_g' ? base + 10 * DAY : base + 100 + (d.ownerKeyId === 'key_a' ? backlogTimes : otherTimes).pop()!;
        await store.webhooks.recordAttempt(
          d.id,
          'w0',
          { at: base, statusCode: 500, error: 'HTTP 500', durationMs: 1 },
          { status: 'pending', nextAttemptAt: at },
        );
      }
      // the earliest ends (delivered): never claimed again
      const [ended] = await store.webhooks.claimDue('w0', base + 10_000, base + 10_001, 1);
      expect(await store.webhooks.recordAttempt(ended!.id, 'w0', { at: base, statusCode: 200, error: null, durationMs: 1 }, { status: 'delivered' })).toBe(
        true,
      );
      /** What the rule takes at `now`, from every delivery's record. */
      const expected = async (now: number, limit: number): Promise<string[]> => {
        const rows = (await Promise.all(taskIds.map((id) => store.webhooks.listForTask(id)))).flat();
        const due = rows.filter((d) => d.status === 'pending' && d.nextAttemptAt !== null && d.nextAttemptAt <= now);
        due.sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt!);
        const counted = new Map<string, number>();
        const turn = new Map<string, number>();
        for (const d of due) {
          const n = (counted.get(d.ownerKeyId) ?? 0) + 1;
          counted.set(d.ownerKeyId, n);
          turn.set(d.id, n);
        }
        return due
          .sort((a, b) => turn.get(a.id)! - turn.get(b.id)! || a.nextAttemptAt! - b.nextAttemptAt!)
          .slice(0, limit)
          .map((d) => d.id)
          .sort();
      };
      let claimed = 0;
      for (const [now, limit] of [
        [base + 100 + 5, 3],
        [base + 100 + 12, 4],
        [base + 100 + 20, 2],
        [base + 100 + 40, 5],
        [base + 100 + 40, 16],
        [base + 100 + 40, 16],
      ] as const) {
        const want = await expected(now, limit);
        const got = await store.webhooks.claimDue(`w${now}`, now, base + DAY, limit);
        expect(got.map((d) => d.id).sort()).toEqual(want);
        claimed += got.length;
      }
      expect(claimed).toBe(owners.length - 3); // all but key_g's two and the one delivered
    });

    it('attempts are appended; pending waits for its time, delivered and failed end it', async () => {
      const store = s();
      await key(store);
      const task = await started(store);
      await completeTask(store.tasks, task, 'w1', { files: [] }, T + MINUTE);
      const now = Date.now() + 1000;
      const [d] = await store.webhooks.claimDue('w1', now, now + MINUTE, 1);
      const fail = { at: now, statusCode: 500, error: 'HTTP 500: oops', durationMs: 12 };
      expect(await store.webhooks.recordAttempt(d!.id, 'w1', fail, { status: 'pending', nextAttemptAt: now + 5000 })).toBe(true);
      expect(await store.webhooks.claimDue('w1', now + 4999, now + MINUTE, 1)).toEqual([]);
      const [again] = await store.webhooks.claimDue('w2', now + 5000, now + MINUTE, 1);
      expect(again?.attempts).toEqual([fail]);
      const ok = { at: now + 5000, statusCode: 204, error: null, durationMs: 3 };
      expect(await store.webhooks.recordAttempt(d!.id, 'w2', ok, { status: 'delivered' })).toBe(true);
      expect(await store.webhooks.recordAttempt(d!.id, 'w2', ok, { status: 'delivered' })).toBe(false); // finished
      const [done] = await store.webhooks.listForTask(task.id);
      expect(done).toMatchObject({ status: 'delivered', attempts: [fail, ok], nextAttemptAt: null });
      expect(await store.webhooks.claimDue('w3', now + DAY, now + DAY + MINUTE, 10)).toEqual([]);
    });

    it('a delivery is deleted with its task (retention)', async () => {
      const store = s();
      await key(store);
      const task = await started(store);
      await completeTask(store.tasks, task, 'w1', { files: [] }, T + MINUTE);
      expect(await store.webhooks.listForTask(task.id)).toHaveLength(1);
      expect(await store.tasks.delete(task.id)).toBe(true);
      expect(await store.webhooks.listForTask(task.id)).toEqual([]);
      expect(await store.webhooks.claimDue('w1', Date.now() + DAY, Date.now() + DAY, 10)).toEqual([]);
    });
  });

  describe('webhooks: secrets and the default URL', () => {
    const s = useStore(open);

    it('a secret is created on first use and kept; rotation keeps the old one as previous', async () => {
      const store = s();
      await key(store);
      expect(await store.webhooks.secrets('key_nope', 'whsec_x')).toBeUndefined();
      expect(await store.webhooks.secrets('key_a', 'whsec_one')).toEqual({ current: 'whsec_one', previous: null, rotatedAt: null });
      expect((await store.webhooks.secrets('key_a', 'whsec_other'))?.current).toBe('whsec_one');
      expect(await store.webhooks.rotateSecret('key_a', 'whsec_two', T)).toEqual({ current: 'whsec_two', previous: 'whsec_one', rotatedAt: T });
      expect(await store.webhooks.secrets('key_a', 'whsec_other')).toEqual({ current: 'whsec_two', previous: 'whsec_one', rotatedAt: T });
      expect(await store.webhooks.rotateSecret('key_nope', 'whsec_x', T)).toBeUndefined();
    });

    it('a key default webhook URL is set, listed and cleared', async () => {
      const store = s();
      await key(store);
      expect((await store.keys.list())[0]?.webhookUrl).toBeNull();
      expect(await store.keys.setWebhookUrl('key_a', URL_A)).toBe(true);
      expect(await store.keys.findActiveByHash('hash-key_a')).toMatchObject({ webhookUrl: URL_A });
      expect(await store.keys.setWebhookUrl('key_a', null)).toBe(true);
      expect((await store.keys.findActiveByHash('hash-key_a'))?.webhookUrl).toBeNull();
      expect(await store.keys.setWebhookUrl('key_nope', URL_A)).toBe(false);
    });
  });
}
