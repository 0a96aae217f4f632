import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite/open.js';
import { USAGE_FLUSH_MS } from '../src/store/sqlite/usage-store.js';
import type { ChatUsageRecord, Store } from '../src/store/types.js';
import { tempDir } from './helpers/harness.js';

// Chat usage rows are written in batches (one transaction per USAGE_FLUSH_MS): readers through
// the same store see them at once, other connections within the window, and closing writes the rest.
const row = (requestId: string): ChatUsageRecord => ({ keyId: 'key_u', model: 'chat-2.5-flash', requestId, promptTokens: 3, completionTokens: 4, createdAt: 1000 });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('chat usage batching (sqlite)', () => {
  const open: Store[] = [];
  afterEach(() => { for (const s of open.splice(0)) s.close(); });

  function twoConnections(): { file: string; api: Store; other: Store } {
    const file = path.join(tempDir(), 'mediagate.db');
    const api = openSqliteStore(file);
    const other = openSqliteStore(file);
    open.push(api, other);
    return { file, api, other };
  }

  it('writes the rows of one window together, after the window', async () => {
    const { api, other } = twoConnections();
    api.usage.recordChatUsage(row('r1'));
    api.usage.recordChatUsage(row('r2'));
    expect(other.usage.chatUsageByKey('key_u')).toEqual([]); // still pending
    await sleep(USAGE_FLUSH_MS * 3);
    expect(other.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 2, promptTokens: 6, completionTokens: 8 }]);
  });

  it('a read through the recording store sees pending rows at once', () => {
    const { api } = twoConnections();
    api.usage.recordChatUsage(row('r1'));
    expect(api.usage.chatUsageByKey('key_u')[0]?.requests).toBe(1);
  });

  it('closing the store writes what is pending', () => {
    const { file, api } = twoConnections();
    api.usage.recordChatUsage(row('r1'));
    api.close();
    open.splice(open.indexOf(api), 1);
    const reopened = openSqliteStore(file);
    open.push(reopened);
    expect(reopened.usage.chatUsageByKey('key_u')[0]?.requests).toBe(1);
  });
});
