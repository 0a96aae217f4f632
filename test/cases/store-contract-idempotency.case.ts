/**
 * Store contract, IdempotencyStore (G70-G73): `begin` answers new / replay / mismatch /
 * in_progress / recovered; `complete` stores a response; `abandon` frees only an unanswered claim;
 * `purge` forgets old records; a record older than `expiredBefore` counts as absent.
 */
import { describe, expect, it } from 'vitest';
import { idempotencyTaskKey, type Store } from '../../src/store/types.js';
import { DAY, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask } from '../helpers/task-rows.js';

/** The gateway's bounds (G72, G73): a claim is stale after 2 minutes, a record expires after 24 hours. */
const STALE_MS = 120_000;

interface BeginArgs {
  keyId?: string;
  idemKey?: string;
  fingerprint?: string;
}

/** `begin` at `now` with the gateway's stale and expiry bounds. */
function begin(store: Store, now: number, { keyId = 'key_a', idemKey = 'idem-1', fingerprint = 'fp-1' }: BeginArgs = {}) {
  return store.idempotency.begin(keyId, idemKey, fingerprint, now, now - STALE_MS, now - DAY);
}

export function idempotencyStoreContract(open: OpenStore): void {
  describe('idempotency: claims and replays (begin, complete)', () => {
    const s = useStore(open);

    it('a key never seen is new; its claim is then in progress for the same request and a mismatch for another', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      expect(await begin(store, T + 1)).toEqual({ state: 'in_progress' });
      expect(await begin(store, T + 1, { fingerprint: 'fp-2' })).toEqual({ state: 'mismatch' });
      expect(await begin(store, T + STALE_MS)).toEqual({ state: 'in_progress' }); // claimed exactly at staleBefore: not older
    });

    it('a completed key replays its response, byte for byte, to the same request, however old the claim; another request is a mismatch', async () => {
      const store = s();
      const response = '{"id":"task_1","object":"image","msg":"成功 ✓",  "status":"queued"}\n';
      expect(await begin(store, T)).toEqual({ state: 'new' });
      await store.idempotency.complete('key_a', 'idem-1', 200, response);
      expect(await begin(store, T + 10)).toEqual({ state: 'replay', statusCode: 200, response });
      expect(await begin(store, T + 10 * STALE_MS)).toEqual({ state: 'replay', statusCode: 200, response });
      expect(await begin(store, T + 10, { fingerprint: 'fp-2' })).toEqual({ state: 'mismatch' });
    });

    it('records are per API key: the same Idempotency-Key of another key is unrelated', async () => {
      const store = s();
      expect(await begin(store, T, { keyId: 'key_a' })).toEqual({ state: 'new' });
      expect(await begin(store, T, { keyId: 'key_b', fingerprint: 'fp-other' })).toEqual({ state: 'new' });
      await store.idempotency.complete('key_a', 'idem-1', 201, 'a');
      expect(await begin(store, T + 1, { keyId: 'key_b', fingerprint: 'fp-other' })).toEqual({ state: 'in_progress' });
      expect(await begin(store, T + 1, { keyId: 'key_a' })).toEqual({ state: 'replay', statusCode: 201, response: 'a' });
      expect(await begin(store, T + 1, { keyId: 'key_a', idemKey: 'idem-2' })).toEqual({ state: 'new' });
    });

    it('complete of a key that was never claimed stores nothing', async () => {
      const store = s();
      await store.idempotency.complete('key_a', 'idem-1', 200, 'x');
      expect(await begin(store, T)).toEqual({ state: 'new' });
    });
  });

  describe('idempotency: stale claims (begin after the request died)', () => {
    const s = useStore(open);

    it('a stale claim without a committed task is free again, and claimed anew', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      const later = T + STALE_MS + 1;
      expect(await begin(store, later, { fingerprint: 'fp-2' })).toEqual({ state: 'new' });
      expect(await begin(store, later + 1, { fingerprint: 'fp-2' })).toEqual({ state: 'in_progress' });
      expect(await begin(store, later + 1)).toEqual({ state: 'mismatch' });
    });

    it('a claim whose task was committed is recovered with that task, stale or not (G266), for the same request only', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      const task = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a', idempotencyKey: idempotencyTaskKey('key_a', 'idem-1', T) }));
      expect(await begin(store, T + 1)).toEqual({ state: 'recovered', taskId: task.id }); // not stale yet: its answer would be this task's
      const later = T + STALE_MS + 1;
      expect(await begin(store, later)).toEqual({ state: 'recovered', taskId: task.id });
      expect(await begin(store, later + 1)).toEqual({ state: 'recovered', taskId: task.id });
      expect(await begin(store, later, { fingerprint: 'fp-2' })).toEqual({ state: 'mismatch' });
    });

    it("only the task of this very claim recovers it: not one of an earlier claim, nor another key's", async () => {
      const store = s();
      await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a', idempotencyKey: idempotencyTaskKey('key_a', 'idem-1', T - 5) }));
      await insertTask(store.tasks, newTask({ ownerKeyId: 'key_b', idempotencyKey: idempotencyTaskKey('key_b', 'idem-1', T) }));
      expect(await begin(store, T)).toEqual({ state: 'new' });
      expect(await begin(store, T + STALE_MS + 1)).toEqual({ state: 'new' });
    });
  });

  describe('idempotency: abandon, expiry, purge', () => {
    const s = useStore(open);

    it('abandon frees an unanswered claim', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      await store.idempotency.abandon('key_b', 'idem-1'); // another key's: no effect
      expect(await begin(store, T + 1)).toEqual({ state: 'in_progress' });
      await store.idempotency.abandon('key_a', 'idem-1');
      expect(await begin(store, T + 2, { fingerprint: 'fp-2' })).toEqual({ state: 'new' });
      await store.idempotency.abandon('key_a', 'idem-never'); // unknown: no effect, no error
    });

    it('a claim whose task was committed is recovered at once, and abandon keeps it (G266)', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      const task = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a', idempotencyKey: idempotencyTaskKey('key_a', 'idem-1', T) }));
      await store.idempotency.abandon('key_a', 'idem-1'); // the request answered an error after its commit
      expect(await begin(store, T + 1)).toEqual({ state: 'recovered', taskId: task.id });
      expect(await begin(store, T + 1, { fingerprint: 'fp-2' })).toEqual({ state: 'mismatch' });
    });

    it('abandon never drops a stored response', async () => {
      const store = s();
      expect(await begin(store, T)).toEqual({ state: 'new' });
      await store.idempotency.complete('key_a', 'idem-1', 200, 'first');
      await store.idempotency.abandon('key_a', 'idem-1');
      expect(await begin(store, T + 1)).toEqual({ state: 'replay', statusCode: 200, response: 'first' });
    });

    it('a record older than expiredBefore counts as absent: answered or not, with or without a task', async () => {
      const store = s();
      expect(await begin(store, T, { idemKey: 'answered' })).toEqual({ state: 'new' });
      await store.idempotency.complete('key_a', 'answered', 200, 'old');
      expect(await begin(store, T, { idemKey: 'with-task' })).toEqual({ state: 'new' });
      await insertTask(store.tasks, newTask({ idempotencyKey: idempotencyTaskKey('key_a', 'with-task', T) }));
      expect(await begin(store, T + DAY, { idemKey: 'answered' })).toEqual({ state: 'replay', statusCode: 200, response: 'old' }); // exactly at expiredBefore: not older
      const later = T + DAY + 1;
      expect(await begin(store, later, { idemKey: 'answered', fingerprint: 'fp-2' })).toEqual({ state: 'new' });
      expect(await begin(store, later + 1, { idemKey: 'answered', fingerprint: 'fp-2' })).toEqual({ state: 'in_progress' });
      expect(await begin(store, later, { idemKey: 'with-task' })).toEqual({ state: 'new' });
    });

    it('purge deletes the records created before the bound and says how many', async () => {
      const store = s();
      for (const [i, idemKey] of ['i0', 'i1', 'i2'].entries()) expect(await begin(store, T + 10 * i, { idemKey })).toEqual({ state: 'new' });
      await store.idempotency.complete('key_a', 'i1', 200, 'one');
      expect(await store.idempotency.purge(T)).toBe(0);
      expect(await store.idempotency.purge(T + 10)).toBe(1); // i0
      expect(await begin(store, T + 30, { idemKey: 'i1' })).toEqual({ state: 'replay', statusCode: 200, response: 'one' });
      expect(await begin(store, T + 30, { idemKey: 'i0', fingerprint: 'fp-2' })).toEqual({ state: 'new' }); // gone: claimed anew at T + 30
      expect(await store.idempotency.purge(T + 10)).toBe(0);
      expect(await store.idempotency.purge(T + 31)).toBe(3);
      expect(await begin(store, T + 40, { idemKey: 'i1', fingerprint: 'fp-2' })).toEqual({ state: 'new' });
    });
  });
}
