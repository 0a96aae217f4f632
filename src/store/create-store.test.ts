import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../config-error.js';
import { loadConfig } from '../config.js';
import { createStore } from './create-store.js';
import type { Store } from './types.js';

describe('createStore (G177)', () => {
  const dirs: string[] = [];
  const opened: Store[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('without MEDIAGATE_DATABASE_URL opens the SQLite file under the data directory, with its optional capabilities', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-create-store-'));
    dirs.push(dir);
    const config = loadConfig({ MEDIAGATE_DATA_DIR: dir });
    const store = await createStore(config);
    opened.push(store);
    await store.keys.insert({ id: 'key_cs', name: 'cs', accountId: 'acct_cs', prefix: 'mg_cscsc', createdAt: 1, revokedAt: null, hash: 'hash-cs' });
    expect(fs.existsSync(path.join(dir, 'mediagate.db'))).toBe(true);
    expect(typeof store.backup).toBe('function');
    expect(typeof store.tasks.changedElsewhere).toBe('function');
    // the same file again: what the first wrote is there
    const again = await createStore(config);
    opened.push(again);
    expect((await again.keys.findActiveByHash('hash-cs'))?.id).toBe('key_cs');
  });

  // (no PostgreSQL answers at port 1: whether the module is built or not, opening fails, naming no password)
  it('with MEDIAGATE_DATABASE_URL never falls back to SQLite: an unreachable database stops the start', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-create-store-'));
    dirs.push(dir);
    const config = loadConfig({ MEDIAGATE_DATA_DIR: dir, MEDIAGATE_DATABASE_URL: 'postgres://mg:secret@127.0.0.1:1/none' });
    const err = await createStore(config).then(
      (s) => {
        opened.push(s);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    if (err instanceof ConfigError) expect(err.setting).toBe('MEDIAGATE_DATABASE_URL');
    expect(String(err)).not.toContain('secret');
    expect(fs.existsSync(path.join(dir, 'mediagate.db'))).toBe(false);
  });
});
