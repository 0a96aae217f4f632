/**
 * The store contract suite: the behaviour every `Store` implementation (src/store/types.ts) must
 * have, one describe block per interface. It talks to the Store interface only and awaits every
 * call (the contract is asynchronous: G176), so it runs unchanged against every backend.
 * Run it from each implementation's test file: `runStoreContract(name, open, options)`, where
 * `open` gives a fresh, empty store each call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-root.js';
import { adminStoreContract } from './store-contract-admin.case.js';
import { sessionsStoreContract } from './store-contract-sessions.case.js';
import { assetStoreContract } from './store-contract-assets.case.js';
import { T, newTask, useStore, type OpenStore, type StoreContractOptions } from './store-contract-helpers.js';
import { idempotencyStoreContract } from './store-contract-idempotency.case.js';
import { keyStoreContract, usageStoreContract } from './store-contract-keys-usage.case.js';
import { lookupsTogetherContract } from './store-contract-lookups.case.js';
import { taskLeasesContract } from './store-contract-task-leases.case.js';
import { taskListContract } from './store-contract-task-list.case.js';
import { taskRecordsContract } from './store-contract-tasks.case.js';
import { creditsContract } from './store-contract-credits.case.js';
import { webhooksContract } from './store-contract-webhooks.case.js';
import { insertTask } from '../helpers/task-rows.js';
import { workerStoreContract } from './store-contract-workers.case.js';

export { newTask } from './store-contract-helpers.js';
export type { OpenStore, StoreContractOptions } from './store-contract-helpers.js';

export function runStoreContract(name: string, open: OpenStore, options: StoreContractOptions = {}): void {
  describe(`store contract: ${name}`, () => {
    taskRecordsContract(open);
    taskLeasesContract(open);
    taskListContract(open);
    assetStoreContract(open);
    idempotencyStoreContract(open);
    keyStoreContract(open);
    lookupsTogetherContract(open);
    usageStoreContract(open);
    creditsContract(open);
    webhooksContract(open);
    adminStoreContract(open);
    workerStoreContract(open);
    sessionsStoreContract(open);
    storeContract(open, options);
  });
}

function storeContract(open: OpenStore, { openFile }: StoreContractOptions): void {
  describe('store: ping, backup', () => {
    const s = useStore(open);

    it('ping answers', async () => {
      await expect(s().ping()).resolves.toBeUndefined();
    });

    it('backup is an optional capability: a function where present', () => {
      expect(['undefined', 'function']).toContain(typeof s().backup);
    });

    it.skipIf(!openFile)('backup writes a consistent copy: tasks, keys and the usage rows recorded just before', async () => {
      const store = s();
      const task = await insertTask(store.tasks, newTask({ createdAt: T }));
      await store.keys.insert({ id: 'key_bk', name: 'bk', accountId: 'acct_bk', prefix: 'mg_bkbkb', createdAt: T, revokedAt: null, hash: 'hash-bk' });
      await store.usage.recordChatUsage({ keyId: 'key_bk', model: 'chat-2.5-pro', requestId: 'r1', promptTokens: 3, completionTokens: 4, createdAt: T });
      const file = path.join(tempDir('store-backup-'), 'copy.db');
      if (!store.backup) throw new Error('a store given openFile must have backup');
      await store.backup(file);
      expect(fs.statSync(file).size).toBeGreaterThan(0);
      await store.tasks.delete(task.id); // after the backup: not in the copy's past, not in its future
      const copy = await openFile!(file);
      try {
        expect(await copy.tasks.get(task.id)).toEqual(task);
        expect((await copy.keys.findActiveByHash('hash-bk'))?.id).toBe('key_bk');
        expect(await copy.usage.chatUsageByKey('key_bk')).toEqual([{ model: 'chat-2.5-pro', requests: 1, promptTokens: 3, completionTokens: 4 }]);
      } finally {
        await copy.close();
      }
    });
  });
}
