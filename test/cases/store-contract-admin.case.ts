/**
 * Store contract, what the admin API needs (G300-G310): key roles, allow-lists, expiry and in-flight
 * bounds; pages of keys, accounts and ledger entries; key updates, rotations with a grace period and
 * revocations, each with its audit entry written by the same call (and none when nothing changed);
 * last-used times that only move forward; grants that never take back what is held; the audit log's
 * filters; the poll lookup refusing an expired key's tasks.
 */
import { describe, expect, it } from 'vitest';
import { MAX_AVAILABLE_MICRO, type ApiKeyRecord, type NewAuditEntry, type Store } from '../../src/store/types.js';
import { DAY, MINUTE, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask } from '../helpers/task-rows.js';

const C = 1_000_000;

const key = (id: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord & { hash: string } => ({
  id,
  name: `name of ${id}`,
  accountId: 'acct_a',
  prefix: 'mg_xxxxx',
  createdAt: T,
  revokedAt: null,
  hash: `hash-${id}`,
  ...over,
});

const audit = (action: NewAuditEntry['action'], target: string, at = T, actor = 'key_admin'): NewAuditEntry => ({
  at,
  actor,
  action,
  target,
  requestId: `req-${action}-${target}`,
  details: { asked: action },
});

async function withAccount(store: Store, credits = 10, id = 'acct_a'): Promise<void> {
  await store.credits.createAccount({ id, name: `account ${id}`, createdAt: T, startingMicro: credits * C });
}

export function adminStoreContract(open: OpenStore): void {
  describe('admin: key records (role, models, expiry, bounds), pages and updates', () => {
    const s = useStore(open);

    it('insert keeps role, models, expiry and the in-flight bound; get answers any key by id with lastUsed (null until used)', async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_adm', { role: 'admin' }));
      await store.keys.insert(key('key_lim', { models: ['pic', 'clip:*'], expiresAt: T + MINUTE, maxInFlight: 3 }));
      expect(await store.keys.findActiveByHash('hash-key_adm')).toMatchObject({ role: 'admin', models: null, expiresAt: null, maxInFlight: null });
      expect(await store.keys.findActiveByHash('hash-key_lim')).toMatchObject({
        role: 'caller',
        models: ['pic', 'clip:*'],
        expiresAt: T + MINUTE,
        maxInFlight: 3,
      });
      expect(await store.keys.get('key_lim')).toMatchObject({ id: 'key_lim', models: ['pic', 'clip:*'], lastUsed: null });
      expect(await store.keys.get('key_lim')).not.toHaveProperty('hash');
      expect(await store.keys.get('key_missing')).toBeUndefined();
    });

    it('listPage: newest first, filtered by account, role, revoked and name (any case, no wildcards), read on from a position', async () => {
      const store = s();
      await withAccount(store);
      await withAccount(store, 0, 'acct_b');
      await store.keys.insert(key('key_1', { createdAt: T + 1, name: 'Prod One' }));
      await store.keys.insert(key('key_2', { createdAt: T + 2, name: 'staging', accountId: 'acct_b' }));
      await store.keys.insert(key('key_3', { createdAt: T + 3, name: 'ops', role: 'admin' }));
      await store.keys.insert(key('key_4', { createdAt: T + 3, name: '100% prod' }));
      await store.keys.revoke('key_2', T + 10);
      const ids = async (q: Partial<Parameters<Store['keys']['listPage']>[0]>) => (await store.keys.listPage({ limit: 10, ...q })).map((k) => k.id);
      expect(await ids({})).toEqual(['key_4', 'key_3', 'key_2', 'key_1']);
      expect(await ids({ accountId: 'acct_b' })).toEqual(['key_2']);
      expect(await ids({ role: 'admin' })).toEqual(['key_3']);
      expect(await ids({ revoked: true })).toEqual(['key_2']);
      expect(await ids({ revoked: false })).toEqual(['key_4', 'key_3', 'key_1']);
      expect(await ids({ nameContains: 'PROD' })).toEqual(['key_4', 'key_1']);
      expect(await ids({ nameContains: '%' })).toEqual(['key_4']);
      expect(await ids({ nameContains: '_' })).toEqual([]);
      expect(await ids({ limit: 2 })).toEqual(['key_4', 'key_3']);
      expect(await ids({ before: { createdAt: T + 3, id: 'key_3' } })).toEqual(['key_2', 'key_1']);
      for (const k of await store.keys.listPage({ limit: 10 })) expect(k).toHaveProperty('lastUsed', null);
    });

    it('update changes the given fields only (null clears), is seen by the next lookup, and writes its audit entry; an unknown id changes and audits nothing', async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_u', { submitRate: 5, models: ['pic'] }));
      expect((await store.keys.findActiveByHash('hash-key_u'))?.models).toEqual(['pic']); // a backend may cache this lookup
      const updated = await store.keys.update(
        'key_u',
        { name: 'renamed', models: null, expiresAt: T + MINUTE, maxInFlight: 2, spendCapMicro: 7 * C },
        audit('key.update', 'key_u'),
      );
      expect(updated).toMatchObject({
        id: 'key_u',
        name: 'renamed',
        models: null,
        expiresAt: T + MINUTE,
        maxInFlight: 2,
        spendCapMicro: 7 * C,
        submitRate: 5,
        lastUsed: null,
      });
      expect(await store.keys.findActiveByHash('hash-key_u')).toMatchObject({ name: 'renamed', models: null, expiresAt: T + MINUTE, maxInFlight: 2 });
      expect(await store.keys.update('key_u', { expiresAt: null })).toMatchObject({ expiresAt: null, name: 'renamed' });
      expect(await store.keys.update('key_missing', { name: 'x' }, audit('key.update', 'key_missing'))).toBeUndefined();
      expect((await store.audit.list({ limit: 10 })).map((e) => [e.action, e.target])).toEqual([['key.update', 'key_u']]);
    });

    it('recordLastUsed moves lastUsed forward only, for the keys named', async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_a'));
      await store.keys.insert(key('key_b'));
      await store.keys.recordLastUsed(
        new Map([
          ['key_a', T + 5000],
          ['key_b', T + 100],
        ]),
      );
      await store.keys.recordLastUsed(new Map([['key_a', T + 1000]]));
      await store.keys.recordLastUsed(new Map());
      expect((await store.keys.get('key_a'))?.lastUsed).toBe(T + 5000);
      expect((await store.keys.listPage({ limit: 5 })).map((k) => [k.id, k.lastUsed]).sort()).toEqual([
        ['key_a', T + 5000],
        ['key_b', T + 100],
      ]);
    });
  });

  describe('admin: rotation with a grace period, revocation', () => {
    const s = useStore(open);

    it('rotate: the new secret works at once; the old one is found with its grace end (none without grace); revoke ends both', async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_r'));
      expect((await store.keys.findActiveByHash('hash-key_r'))?.id).toBe('key_r'); // cached where a backend caches
      expect(await store.keys.rotate('key_r', { hash: 'hash-r2', prefix: 'mg_r2r2r' }, T + MINUTE, T, audit('key.rotate', 'key_r'))).toBe(true);
      expect(await store.keys.findActiveByHash('hash-r2')).toMatchObject({ id: 'key_r' });
      expect(await store.keys.findActiveByHash('hash-r2')).not.toHaveProperty('graceUntil');
      expect(await store.keys.findActiveByHash('hash-key_r')).toMatchObject({ id: 'key_r', graceUntil: T + MINUTE });
      expect(await store.keys.findByHash('hash-key_r')).toBeUndefined();
      // a second rotation without grace: the secret it replaces is gone at once; the first one keeps its grace
      expect(await store.keys.rotate('key_r', { hash: 'hash-r3', prefix: 'mg_r3r3r' }, null, T + 1)).toBe(true);
      expect(await store.keys.findActiveByHash('hash-r2')).toBeUndefined();
      expect(await store.keys.findActiveByHash('hash-key_r')).toMatchObject({ graceUntil: T + MINUTE });
      // a rotation after that grace ended forgets the secret
      expect(await store.keys.rotate('key_r', { hash: 'hash-r4', prefix: 'mg_r4r4r' }, null, T + MINUTE)).toBe(true);
      expect(await store.keys.findActiveByHash('hash-key_r')).toBeUndefined();
      expect(await store.keys.rotate('key_r', { hash: 'hash-r5', prefix: 'mg_r5r5r' }, T + 2 * MINUTE, T + MINUTE + 1)).toBe(true);
      expect(await store.keys.revoke('key_r', T + MINUTE + 2, audit('key.revoke', 'key_r'))).toBe(true);
      expect(await store.keys.findActiveByHash('hash-r5')).toBeUndefined();
      expect(await store.keys.findActiveByHash('hash-r4')).toBeUndefined();
      expect(await store.keys.rotate('key_r', { hash: 'hash-r6', prefix: 'mg_r6r6r' }, null, T + MINUTE + 3, audit('key.rotate', 'key_r'))).toBe(false);
      expect(await store.keys.revoke('key_r', T + MINUTE + 4, audit('key.revoke', 'key_r'))).toBe(false);
      expect((await store.audit.list({ limit: 10 })).map((e) => e.action)).toEqual(['key.revoke', 'key.rotate']);
    });

    it("the poll lookup answers an expiring key's task until its expiry only (also when read before), and never for a rotated-out secret", async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_e', { expiresAt: T + MINUTE }));
      const task = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_e' }));
      expect((await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T))?.id).toBe(task.id);
      expect(await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T + MINUTE)).toBeUndefined();
      expect((await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T + 1))?.id).toBe(task.id);
      await store.keys.update('key_e', { expiresAt: T + 10 }); // moved earlier: answers read before it do not outlive it
      expect(await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T + 10)).toBeUndefined();
      await store.keys.update('key_e', { expiresAt: null });
      expect((await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T + 10 * MINUTE))?.id).toBe(task.id);
      await store.keys.rotate('key_e', { hash: 'hash-e2', prefix: 'mg_e2e2e' }, T + 20 * MINUTE, T);
      expect(await store.tasks.getOwnedByKeyHash(task.id, 'hash-key_e', T)).toBeUndefined();
      expect((await store.tasks.getOwnedByKeyHash(task.id, 'hash-e2', T))?.id).toBe(task.id);
    });

    it("a task's own in-flight bound (its key's) applies over the call's", async () => {
      const store = s();
      const results = await store.tasks.insertWithinBound(
        [
          newTask({ ownerKeyId: 'key_x', inFlightBound: 1 }),
          newTask({ ownerKeyId: 'key_x', inFlightBound: 1 }),
          newTask({ ownerKeyId: 'key_y' }),
          newTask({ ownerKeyId: 'key_y' }),
          newTask({ ownerKeyId: 'key_y' }),
        ],
        { maxInFlight: 2, enforceCredits: false },
      );
      expect(results.map((r) => ('refused' in r ? r.refused : 'ok'))).toEqual(['ok', 'in_flight', 'ok', 'ok', 'in_flight']);
      const more = await store.tasks.insertWithinBound(
        [newTask({ ownerKeyId: 'key_x', inFlightBound: 3 }), newTask({ ownerKeyId: 'key_y', inFlightBound: 0 })],
        { maxInFlight: 1, enforceCredits: false },
      );
      expect(more.map((r) => ('refused' in r ? r.refused : 'ok'))).toEqual(['ok', 'ok']);
    });
  });

  describe('admin: usage counts the tasks a batch submits (G321, G326)', () => {
    const s = useStore(open);

    it("each task once, in its hour and day, under its hold's account, else its key's, else none; refused tasks not at all", async () => {
      const store = s();
      await withAccount(store, 10, 'acct_a');
      await withAccount(store, 10, 'acct_b');
      await store.keys.insert(key('key_acct'));
      const H = 3_600_000;
      const base = Math.floor(T / DAY) * DAY + 5 * H; // two hours of one day
      const results = await store.tasks.insertWithinBound(
        [
          newTask({ ownerKeyId: 'key_acct', model: 'm1', createdAt: base }),
          newTask({ ownerKeyId: 'key_acct', model: 'm1', createdAt: base + 10 }),
          newTask({ ownerKeyId: 'key_acct', model: 'm1', createdAt: base + H }),
          newTask({ ownerKeyId: 'key_acct', model: 'm2', createdAt: base }),
          newTask({ ownerKeyId: 'key_gone', model: 'm1', createdAt: base, inFlightBound: 1 }),
          newTask({ ownerKeyId: 'key_gone', model: 'm1', createdAt: base + 1, inFlightBound: 1 }),
          newTask({ ownerKeyId: 'key_held', model: 'm2', createdAt: base + 2, charge: { accountId: 'acct_b', holdMicro: C, perSecondMicro: null } }),
        ],
        { maxInFlight: 0, enforceCredits: false },
      );
      expect(results.map((r) => ('refused' in r ? r.refused : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'in_flight', 'ok']);
      await store.tasks.insertWithinBound([newTask({ ownerKeyId: 'key_acct', model: 'm1', createdAt: base + 20 })], { maxInFlight: 0, enforceCredits: false });
      const submitted = (rows: Awaited<ReturnType<Store['admin']['usage']>>): string[] =>
        rows
          .filter((r) => r.submitted > 0)
          .map((r) => `${r.bucket - base} ${r.group} ${r.submitted}`)
          .sort();
      expect(submitted(await store.admin.usage({ groupBy: 'account', interval: 'hour', from: base, to: base + 2 * H }))).toEqual([
        `0  1`,
        `0 acct_a 4`,
        `0 acct_b 1`,
        `${H} acct_a 1`,
      ]);
      expect(submitted(await store.admin.usage({ groupBy: 'model', interval: 'day', from: base - 5 * H, to: base - 5 * H + DAY }))).toEqual([
        `${-5 * H} m1 5`,
        `${-5 * H} m2 2`,
      ]);
    });
  });

  describe('admin: accounts and ledger pages, grants within what is available, the audit log', () => {
    const s = useStore(open);

    it('a negative grant may take back what is available, never what is held; the refusal writes nothing', async () => {
      const store = s();
      await withAccount(store, 10);
      await store.keys.insert(key('key_a'));
      await store.tasks.insertWithinBound([newTask({ charge: { accountId: 'acct_a', holdMicro: 4 * C, perSecondMicro: null } })], {
        maxInFlight: 0,
        enforceCredits: true,
      });
      const refused = await store.credits.grant('acct_a', -6 * C - 1, 'too much', T + 1, audit('account.grant', 'acct_a'));
      expect(refused).toEqual({
        granted: false,
        refused: 'below_held',
        account: { id: 'acct_a', name: 'account acct_a', createdAt: T, availableMicro: 6 * C, heldMicro: 4 * C, spentMicro: 0 },
      });
      const taken = await store.credits.grant('acct_a', -6 * C, 'all that is free', T + 2, audit('account.grant', 'acct_a', T + 2));
      expect(taken).toMatchObject({
        granted: true,
        entry: { kind: 'adjust', amountMicro: -6 * C, note: 'all that is free', createdAt: T + 2 },
        account: { availableMicro: 0, heldMicro: 4 * C },
      });
      const entries = await store.audit.list({ limit: 10 });
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        action: 'account.grant',
        target: 'acct_a',
        at: T + 2,
        details: { asked: 'account.grant', entry_id: taken.granted ? taken.entry.id : -1 },
      });
      expect((await store.credits.reconcile()).mismatched).toEqual([]);
    });

    it('a grant may take what is available up to MAX_AVAILABLE_MICRO exactly, never past it; the refusal writes nothing (G442)', async () => {
      const store = s();
      await withAccount(store, 10);
      const fill = await store.credits.grant('acct_a', MAX_AVAILABLE_MICRO - 10 * C, 'to the top', T + 1);
      expect(fill).toMatchObject({ granted: true, account: { availableMicro: MAX_AVAILABLE_MICRO } });
      expect(Number.isSafeInteger(MAX_AVAILABLE_MICRO * 2)).toBe(true); // held and available together stay exact
      const over = await store.credits.grant('acct_a', 1, 'one micro-credit more', T + 2, audit('account.grant', 'acct_a', T + 2));
      expect(over).toEqual({
        granted: false,
        refused: 'above_maximum',
        account: { id: 'acct_a', name: 'account acct_a', createdAt: T, availableMicro: MAX_AVAILABLE_MICRO, heldMicro: 0, spentMicro: 0 },
      });
      expect(await store.audit.list({ limit: 10 })).toEqual([]);
      expect((await store.credits.ledger('acct_a')).map((e) => e.amountMicro)).toEqual([10 * C, MAX_AVAILABLE_MICRO - 10 * C]);
      // taking some back makes room again
      expect(await store.credits.grant('acct_a', -C, 'back', T + 3)).toMatchObject({ granted: true });
      expect(await store.credits.grant('acct_a', C, 'again', T + 4)).toMatchObject({ granted: true, account: { availableMicro: MAX_AVAILABLE_MICRO } });
      expect((await store.credits.reconcile()).mismatched).toEqual([]);
    });

    it('listAccountsPage and ledgerPage: newest first, filtered, read on from a position; createAccount writes its audit entry', async () => {
      const store = s();
      await store.credits.createAccount({ id: 'acct_1', name: 'Alpha', createdAt: T + 1, startingMicro: C }, audit('account.create', 'acct_1'));
      await store.credits.createAccount({ id: 'acct_2', name: 'beta', createdAt: T + 2, startingMicro: 0 });
      await store.credits.createAccount({ id: 'acct_3', name: 'alphabet', createdAt: T + 2, startingMicro: 0 });
      const page = async (q: Partial<Parameters<Store['credits']['listAccountsPage']>[0]>) =>
        (await store.credits.listAccountsPage({ limit: 10, ...q })).map((a) => a.id);
      expect(await page({})).toEqual(['acct_3', 'acct_2', 'acct_1']);
      expect(await page({ nameContains: 'ALPHA' })).toEqual(['acct_3', 'acct_1']);
      expect(await page({ limit: 1, before: { createdAt: T + 2, id: 'acct_2' } })).toEqual(['acct_1']);
      for (let i = 1; i <= 3; i++) await store.credits.grant('acct_1', i * C, `grant ${i}`, T + 10 + i);
      const all = await store.credits.ledgerPage({ accountId: 'acct_1', limit: 10 });
      expect(all.map((e) => e.note)).toEqual(['grant 3', 'grant 2', 'grant 1', 'starting credit']);
      expect((await store.credits.ledgerPage({ accountId: 'acct_1', limit: 2, beforeId: all[1]!.id })).map((e) => e.note)).toEqual([
        'grant 1',
        'starting credit',
      ]);
      expect(await store.credits.ledgerPage({ accountId: 'acct_1', limit: 10, kinds: ['hold', 'capture'] })).toEqual([]);
      expect(await store.credits.ledgerPage({ accountId: 'acct_2', limit: 10 })).toEqual([]);
      expect((await store.audit.list({ limit: 10 })).map((e) => [e.action, e.target])).toEqual([['account.create', 'acct_1']]);
    });

    it('the audit log: newest first, filtered by actor, action, target and time, read on from an id; details kept as written', async () => {
      const store = s();
      await withAccount(store);
      await store.keys.insert(key('key_1'), undefined, audit('key.create', 'key_1', T, 'cli'));
      await store.keys.insert(key('key_2'), undefined, audit('key.create', 'key_2', T + 1000));
      await store.keys.update('key_1', { name: 'x' }, audit('key.update', 'key_1', T + 2000));
      await store.keys.revoke('key_2', T + 3000, audit('key.revoke', 'key_2', T + 3000, 'cli'));
      const list = async (q: Partial<Parameters<Store['audit']['list']>[0]>) =>
        (await store.audit.list({ limit: 10, ...q })).map((e) => `${e.action} ${e.target}`);
      const all = await store.audit.list({ limit: 10 });
      expect(all.map((e) => `${e.action} ${e.target}`)).toEqual(['key.revoke key_2', 'key.update key_1', 'key.create key_2', 'key.create key_1']);
      expect(all[0]).toEqual({
        id: expect.any(Number),
        at: T + 3000,
        actor: 'cli',
        actorName: null,
        action: 'key.revoke',
        target: 'key_2',
        requestId: 'req-key.revoke-key_2',
        details: { asked: 'key.revoke' },
      });
      expect(await list({ actor: 'cli' })).toEqual(['key.revoke key_2', 'key.create key_1']);
      expect(await list({ action: 'key.create' })).toEqual(['key.create key_2', 'key.create key_1']);
      expect(await list({ target: 'key_1' })).toEqual(['key.update key_1', 'key.create key_1']);
      expect(await list({ since: T + 1000, until: T + 3000 })).toEqual(['key.update key_1', 'key.create key_2']);
      expect(await list({ limit: 1, beforeId: all[1]!.id })).toEqual(['key.create key_2']);
      // the actor's name as the key is named now (G449): key_1 was renamed "x" above; no key is named key_admin
      await store.audit.append(audit('task.cancel', 'task_1', T + 4000, 'key_1'));
      expect((await store.audit.list({ limit: 1, actor: 'key_1' }))[0]).toMatchObject({ actor: 'key_1', actorName: 'x' });
      expect((await store.audit.list({ limit: 10, actor: 'key_admin' })).map((e) => e.actorName)).toEqual([null, null]);
    });
  });
}
