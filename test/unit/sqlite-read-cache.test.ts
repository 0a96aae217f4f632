import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { Store } from '../../src/store/types.js';
import { claimNextTask, completeTask } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { newTask } from '../cases/store-contract.case.js';
import { insertTask } from '../helpers/task-rows.js';

// The poll and key reads are cached per connection; a commit by another connection (another
// process, the CLI) must be seen from the next event-loop turn on (every request handled there
// arrived after the commit finished).
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
describe('sqlite read cache across connections', () => {
  const open: Store[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  async function twoConnections(): Promise<[Store, Store]> {
    const file = path.join(tempDir(), 'mediagate.db');
    const a = openSqliteStore(file);
    const b = openSqliteStore(file);
    open.push(a, b);
    await a.keys.insert({ id: 'key_a', name: 'a', accountId: 'acct_a', prefix: 'mg_aaaaa', createdAt: 1, revokedAt: null, hash: 'hash-a' });
    return [a, b];
  }

  it('sees a task finished by another connection', async () => {
    const [api, worker] = await twoConnections();
    const t = await insertTask(api.tasks, newTask({ ownerKeyId: 'key_a' }));
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.status).toBe('queued');
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.status).toBe('queued');
    const claimed = (await claimNextTask(worker.tasks, ['sandbox'], 'w1', 1000))!;
    await nextTurn();
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.status).toBe('processing');
    await completeTask(worker.tasks, claimed, 'w1', { files: [] }, 5);
    await nextTurn();
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.status).toBe('completed');
  });

  it('refuses a key revoked by another connection from the next turn on', async () => {
    const [api, cli] = await twoConnections();
    const t = await insertTask(api.tasks, newTask({ ownerKeyId: 'key_a' }));
    expect((await api.keys.findActiveByHash('hash-a'))?.id).toBe('key_a');
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.id).toBe(t.id);
    expect(await cli.keys.revoke('key_a', 2)).toBe(true);
    await nextTurn();
    expect(await api.keys.findActiveByHash('hash-a')).toBeUndefined();
    expect(await api.tasks.getOwnedByKeyHash(t.id, 'hash-a')).toBeUndefined();
  });

  it('answers a task read for another key hash from the database, not the cache', async () => {
    const [api] = await twoConnections();
    await api.keys.insert({ id: 'key_b', name: 'b', accountId: 'acct_b', prefix: 'mg_bbbbb', createdAt: 1, revokedAt: null, hash: 'hash-b' });
    const t = await insertTask(api.tasks, newTask({ ownerKeyId: 'key_a' }));
    expect((await api.tasks.getOwnedByKeyHash(t.id, 'hash-a'))?.id).toBe(t.id);
    expect(await api.tasks.getOwnedByKeyHash(t.id, 'hash-b')).toBeUndefined();
  });
});
