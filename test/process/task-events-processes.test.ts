/**
 * The status stream across processes (G219): a stream opened on gateway process A (`mediagate
 * serve --role api`, a real child process) follows a task that another process, B (this test
 * process, on its own pool of the same PostgreSQL database), claims, advances and completes, as
 * a worker elsewhere would. A learns of B's writes only through the database's notifications.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/types.js';
import { claimNextTask, completeTask } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { SseReader } from '../helpers/sse-events.js';
import { within } from '../helpers/within.js';

const unavailable = await postgresUnavailable();
const KEY = 'events-test-key-0123456789abcdefgh';
const GENEROUS_MS = 15_000;

describe.skipIf(unavailable !== undefined)(`status stream across two processes on one PostgreSQL${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  let a: ServerProcess | undefined;
  let b: Store | undefined;
  const dataDir = tempDir('mediagate-events-a-');

  beforeAll(async () => {
    ensureBuilt();
    const url = await database.empty();
    a = await startServerProcess(
      {
        MEDIAGATE_DATA_DIR: dataDir,
        MEDIAGATE_DATABASE_URL: url,
        MEDIAGATE_BOOTSTRAP_KEY: KEY,
        MEDIAGATE_SIGNING_SECRET: 'events-signing-secret-0123456789abcdef',
        MEDIAGATE_RATE_LIMIT: 'off',
        MEDIAGATE_LOG_LEVEL: 'info',
      },
      ['--role', 'api'],
    );
    b = await openPostgresStore({ url }); // after A migrated the database
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    if (a && a.child.exitCode === null) a.child.kill('SIGKILL');
    await a?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('A streams every state B writes, in order, and ends after the terminal one', async () => {
    const headers = { authorization: `Bearer ${KEY}` };
    const created = await fetch(`${a!.url}/v1/pic/images`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pic', prompt: 'a fox' }),
    });
    expect(created.status).toBe(200);
    const id = ((await created.json()) as { id: string }).id;
    const r = new SseReader(await fetch(`${a!.url}/v1/tasks/${id}/events`, { headers }));
    const next = async (what: string) => (await within(r.next(), GENEROUS_MS, what))!;
    expect(await next('the current state')).toMatchObject({ id: '1', data: { id, status: 'queued', progress: 0 } });

    const store = b!;
    const queued = (await store.tasks.get(id))!;
    const task = (await claimNextTask(store.tasks, [queued.provider], 'process-b', 60_000))!;
    expect(task.id).toBe(id);
    expect(await next('processing')).toMatchObject({ id: '2', data: { status: 'processing' } });
    expect(await store.tasks.setProgress(id, 'process-b', 55)).toBe(true);
    expect(await next('progress')).toMatchObject({ id: '3', data: { status: 'processing', progress: 55 } });
    expect(await completeTask(store.tasks, task, 'process-b', { files: [] }, Date.now() + 3_600_000)).toBeDefined();
    const last = await next('the terminal state');
    expect(last).toMatchObject({ id: '4', data: { id, status: 'completed', progress: 100 } });
    const query = await fetch(`${a!.url}/v1/result/${id}`, { headers });
    expect(last.data).toEqual(await query.json());
    expect(await within(r.next(), GENEROUS_MS, 'the end of the stream')).toBeUndefined();
    expect(a!.output()).not.toMatch(/"level":(50|60)/);
  });
});
