import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { START_AT_WAL_BYTES, startBackgroundCheckpointer } from '../../src/store/sqlite/checkpointer.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { newTask } from '../cases/store-contract.case.js';
import { insertTasks } from '../helpers/task-rows.js';

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

describe('WAL checkpoints on a worker thread', () => {
  it('copies committed pages into the database file while commits no longer checkpoint', async () => {
    const file = path.join(tempDir(), 'mediagate.db');
    const store = openSqliteStore(file, { backgroundCheckpoint: { intervalMs: 50 } });
    try {
      const before = fs.statSync(file).size;
      const big = { ...newTask().request, params: { prompt: 'x'.repeat(2000) } };
      for (let i = 0; i < 20; i++)
        await insertTasks(
          store.tasks,
          Array.from({ length: 100 }, () => newTask({ request: big })),
        );
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(START_AT_WAL_BYTES);
      // 2,000 tasks of ~2 KB: megabytes in the WAL, far past SQLite's 1,000-page automatic threshold
      expect(await until(() => fs.statSync(file).size > before + 2_000_000)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('starts the thread only once the WAL reaches its size (G299)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'mediagate.db');
    await openSqliteStore(file).close(); // the schema, checkpointed on close
    const store = openSqliteStore(file);
    const cp = startBackgroundCheckpointer(file, 20, () => undefined);
    try {
      await insertTasks(store.tasks, [newTask()]);
      // a few watch intervals with a small WAL: no thread
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
      expect(fs.statSync(`${file}-wal`).size).toBeLessThan(START_AT_WAL_BYTES);
      expect(cp.started()).toBe(false);
      const big = { ...newTask().request, params: { prompt: 'x'.repeat(2000) } };
      while (fs.statSync(`${file}-wal`).size < START_AT_WAL_BYTES)
        await insertTasks(
          store.tasks,
          Array.from({ length: 100 }, () => newTask({ request: big })),
        );
      expect(await until(() => cp.started())).toBe(true);
    } finally {
      cp.stop();
      await store.close();
    }
  });

  it('reports a thread that cannot run, so checkpoints can go back to commits', async () => {
    const failures: Error[] = [];
    const cp = startBackgroundCheckpointer(path.join(tempDir(), 'missing.db'), 50, (err) => failures.push(err), undefined, 0);
    expect(await until(() => failures.length === 1)).toBe(true);
    cp.stop();
  });
});
