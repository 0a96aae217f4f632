import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../helpers/temp-root.js';
import { ensureBuilt, ROOT } from '../helpers/process.js';

// Several processes started together on a new data dir (two `mediagate serve`, or a server and the
// CLI) all open the store and ensure the bootstrap key: the WAL switch, the migrations and the key
// wait for each other instead of failing with SQLITE_BUSY, applying a migration twice or inserting
// the key twice (G119).
const PROCESSES = 4;
const BOOTSTRAP = 'bootstrap-key-started-together-0001';
const ROUNDS = 12;

/** Each child loads the compiled store first, then waits for the common start time, so all open at once. */
const CHILD = `
const [file, startAt] = process.argv.slice(1);
const { openSqliteStore } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'store', 'sqlite', 'open.js')).href)});
const { ensureApiKey } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'auth', 'keys.js')).href)});
while (Date.now() < Number(startAt)) { /* spin: start together */ }
const store = openSqliteStore(file);
await ensureApiKey(store.keys, ${JSON.stringify(BOOTSTRAP)}, 'bootstrap'); // as every server does with MEDIAGATE_BOOTSTRAP_KEY
await store.close();
`;

function run(file: string, startAt: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, file, String(startAt)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = tempDir('mediagate-open-race-');
}, 200_000);
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('opening one new database from several processes at once', () => {
  it(`${PROCESSES} processes x ${ROUNDS} fresh data dirs: every open succeeds, each migration is applied once, the bootstrap key stored once`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const file = path.join(dir, `round-${round}`, 'mediagate.db');
      const startAt = Date.now() + 400; // enough for every child to load the store module first
      const results = await Promise.all(Array.from({ length: PROCESSES }, () => run(file, startAt)));
      for (const r of results) expect(r, `round ${round}: ${r.stderr}`).toMatchObject({ code: 0 });
      const db = new Database(file, { readonly: true });
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(
          Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
        );
        expect(db.prepare('SELECT hash FROM api_keys').pluck().all()).toEqual([hashApiKey(BOOTSTRAP)]); // one bootstrap key
      } finally {
        db.close();
      }
    }
  }, 180_000);
});
