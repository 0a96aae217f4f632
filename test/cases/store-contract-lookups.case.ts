/**
 * Store contract: lookups asked for together (in one event-loop turn, as a loaded gateway asks
 * them; the PostgreSQL store reads them in one query, G193) each answer for their own arguments:
 * the task only for its owner's active key, an unknown or revoked key nothing, equal lookups alike,
 * and a write committed before the lookups is seen by all of them.
 */
import { describe, expect, it } from 'vitest';
import { T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask, insertTasks } from '../helpers/task-rows.js';

const key = (id: string) => ({ id, name: id, accountId: `acct_${id}`, prefix: `mg_${id.slice(-5)}`, createdAt: T, revokedAt: null, hash: `hash-${id}` });

export function lookupsTogetherContract(open: OpenStore): void {
  describe('lookups asked for together', () => {
    const s = useStore(open);

    it('poll reads by key hash: each pair answered for itself, owner and active key only', async () => {
      const store = s();
      for (const k of [key('key_a'), key('key_b'), key('key_r')]) await store.keys.insert(k);
      const [a1, a2, b1, r1] = [newTask(), newTask(), newTask({ ownerKeyId: 'key_b' }), newTask({ ownerKeyId: 'key_r' })];
      await insertTasks(store.tasks, [a1!, a2!, b1!, r1!]);
      await store.tasks.updateIf(a2!.id, { statusIn: ['queued'] }, { status: 'cancelled', finishedAt: T });
      await store.keys.revoke('key_r', T);
      const asked: [string, string][] = [
        [a1!.id, 'hash-key_a'],
        [a2!.id, 'hash-key_a'],
        [b1!.id, 'hash-key_b'],
        [b1!.id, 'hash-key_a'],
        [a1!.id, 'hash-key_b'],
        [r1!.id, 'hash-key_r'],
        ['task_unknown', 'hash-key_a'],
        [a1!.id, 'hash-unknown'],
        [a1!.id, 'hash-key_a'],
      ];
      const answers = await Promise.all(asked.map(([id, hash]) => store.tasks.getOwnedByKeyHash(id, hash)));
      expect(answers.map((t) => t && [t.id, t.ownerKeyId, t.status])).toEqual([
        [a1!.id, 'key_a', 'queued'],
        [a2!.id, 'key_a', 'cancelled'],
        [b1!.id, 'key_b', 'queued'],
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        [a1!.id, 'key_a', 'queued'],
      ]);
      expect(answers[0]).toEqual(answers[8]);
    });

    it('an id holding NUL (PostgreSQL text cannot) reads nothing, and poisons no lookup asked with it', async () => {
      const store = s();
      await store.keys.insert(key('key_a'));
      const t = await insertTask(store.tasks, newTask());
      const [mine, odd] = await Promise.all([store.tasks.getOwnedByKeyHash(t.id, 'hash-key_a'), store.tasks.getOwnedByKeyHash('task_\u0000', 'hash-key_a')]);
      expect([mine?.id, odd]).toEqual([t.id, undefined]);
      expect(await store.tasks.get('task_\u0000')).toBeUndefined();
      expect(await store.tasks.getOwned('task_\u0000', 'key_a')).toBeUndefined();
    });

    it('active keys by hash: each hash answered for itself, a revoked or unknown one with nothing', async () => {
      const store = s();
      for (const k of [key('key_a'), key('key_b'), key('key_r')]) await store.keys.insert(k);
      await store.keys.revoke('key_r', T);
      const hashes = ['hash-key_b', 'hash-key_r', 'hash-key_a', 'hash-unknown', 'hash-key_b'];
      const answers = await Promise.all(hashes.map((h) => store.keys.findActiveByHash(h)));
      expect(answers.map((k) => k?.id)).toEqual(['key_b', undefined, 'key_a', undefined, 'key_b']);
      expect(answers[0]).not.toHaveProperty('hash');
    });

    it('many more lookups than one query takes are all answered', async () => {
      const store = s();
      await store.keys.insert(key('key_a'));
      const tasks = Array.from({ length: 1200 }, () => newTask());
      await insertTasks(store.tasks, tasks);
      const answers = await Promise.all(tasks.map((t, i) => store.tasks.getOwnedByKeyHash(t.id, i % 3 === 0 ? 'hash-other' : 'hash-key_a')));
      expect(answers.map((t, i) => t?.id ?? `none ${i}`)).toEqual(tasks.map((t, i) => (i % 3 === 0 ? `none ${i}` : t.id)));
    });
  });
}
