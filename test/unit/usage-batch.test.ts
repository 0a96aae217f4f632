import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { SqliteUsageStore } from '../../src/store/sqlite/usage-store.js';
import type { ChatUsageRecord, Store } from '../../src/store/types.js';
import { tempDir } from '../helpers/temp-root.js';

// Chat usage rows are written in batches (one transaction per 20 ms, G80): readers through
// the same store see them at once, other connections within the window, and closing writes the rest.
const row = (requestId: string): ChatUsageRecord => ({
  keyId: 'key_u',
  model: 'chat-2.5-flash',
  requestId,
  promptTokens: 3,
  completionTokens: 4,
  createdAt: 1000,
});
/** G80: rows are collected for 20 ms; at most 100,000 wait while writes fail. */
const USAGE_FLUSH_MS = 20;
const USAGE_MAX_PENDING = 100_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('chat usage batching (sqlite)', () => {
  const open: Store[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  function twoConnections(): { file: string; api: Store; other: Store } {
    const file = path.join(tempDir(), 'mediagate.db');
    const api = openSqliteStore(file);
    const other = openSqliteStore(file);
    open.push(api, other);
    return { file, api, other };
  }

  it('writes the rows of one window together, after the window', async () => {
    const { api, other } = twoConnections();
    await api.usage.recordChatUsage(row('r1'));
    await api.usage.recordChatUsage(row('r2'));
    expect(await other.usage.chatUsageByKey('key_u')).toEqual([]); // still pending
    await sleep(USAGE_FLUSH_MS * 3);
    expect(await other.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 2, promptTokens: 6, completionTokens: 8 }]);
  });

  it('a read through the recording store sees pending rows at once', async () => {
    const { api } = twoConnections();
    await api.usage.recordChatUsage(row('r1'));
    expect((await api.usage.chatUsageByKey('key_u'))[0]?.requests).toBe(1);
  });

  it('closing the store writes what is pending', async () => {
    const { file, api } = twoConnections();
    await api.usage.recordChatUsage(row('r1'));
    await api.close();
    open.splice(open.indexOf(api), 1);
    const reopened = openSqliteStore(file);
    open.push(reopened);
    expect((await reopened.usage.chatUsageByKey('key_u'))[0]?.requests).toBe(1);
  });

  it('a failed write is reported, its rows stay pending and are written by a later flush', async () => {
    const db = new Database(':memory:');
    migrate(db);
    const errors: Array<{ rows: number; dropped: boolean }> = [];
    const usage = new SqliteUsageStore(db, (_err, info) => errors.push(info));
    db.exec('ALTER TABLE chat_usage RENAME TO chat_usage_away');
    await usage.recordChatUsage(row('r1'));
    await usage.recordChatUsage(row('r2'));
    expect(usage.tryFlush()).toBe(false);
    expect(errors).toEqual([{ rows: 2, dropped: false }]);
    db.exec('ALTER TABLE chat_usage_away RENAME TO chat_usage');
    expect((await usage.chatUsageByKey('key_u'))[0]?.requests).toBe(2);
    db.close();
    await expect(usage.recordChatUsage(row('r3'))).rejects.toThrow(/closed/);
  });

  it('while writes fail, at most USAGE_MAX_PENDING rows wait; the oldest beyond are dropped and reported', async () => {
    const db = new Database(':memory:');
    migrate(db);
    const errors: Array<{ rows: number; dropped: boolean }> = [];
    const usage = new SqliteUsageStore(db, (_err, info) => errors.push(info));
    for (let i = 0; i <= USAGE_MAX_PENDING; i++) await usage.recordChatUsage(row(`r${i}`));
    expect(errors).toEqual([{ rows: 1, dropped: true }]);
    usage.flush();
    expect((await usage.chatUsageByKey('key_u'))[0]?.requests).toBe(USAGE_MAX_PENDING);
    db.close();
  });

  it('once the database is closed, a pending deferred write neither runs nor reports', async () => {
    const db = new Database(':memory:');
    migrate(db);
    const errors: unknown[] = [];
    const usage = new SqliteUsageStore(db, (err) => errors.push(err));
    await usage.recordChatUsage(row('r1'));
    db.close();
    await sleep(USAGE_FLUSH_MS * 3);
    expect(errors).toEqual([]);
  });
});
