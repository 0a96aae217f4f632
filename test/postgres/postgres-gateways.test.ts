/**
 * Two gateways on one PostgreSQL database, as two processes would run them (each its own store:
 * pool and LISTEN connection): an API-only gateway and a worker gateway that polls for work only
 * every ten minutes and renews its leases every five. What the API process does reaches the worker at once, and back: a submit
 * wakes the worker, a cancel stops the task it runs, and a long-poll on the API process is
 * answered when the worker's process changes the task. No wall-clock millisecond is asserted: a
 * signal that did not arrive would leave the worker waiting out its poll or its renewal (or a 60 s
 * long-poll) and the test would time out.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/main/gateway.js';
import type { MediaProvider } from '../../src/providers/types.js';
import { cancelTask } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';

const unavailable = await postgresUnavailable();

/** A provider whose generations run until they are aborted; it records what it started and what was aborted. */
function endlessProvider(): MediaProvider & { started: string[]; aborted: string[] } {
  const started: string[] = [];
  const aborted: string[] = [];
  return {
    id: 'endless',
    started,
    aborted,
    capabilities: { families: ['pic'] },
    start(job, ctx) {
      started.push(job.taskId);
      return new Promise((_, reject) => {
        ctx.signal.addEventListener(
          'abort',
          () => {
            aborted.push(job.taskId);
            reject(new Error('aborted'));
          },
          { once: true },
        );
      });
    },
  };
}

describe.skipIf(unavailable !== undefined)(`gateways sharing PostgreSQL${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  const provider = endlessProvider();
  const dirs: string[] = [];
  let api: Gateway;
  let worker: Gateway;
  let key: string;

  const gateway = async (env: Record<string, string>): Promise<Gateway> => {
    const dir = tempDir();
    dirs.push(dir);
    const config = loadConfig({
      MEDIAGATE_DATA_DIR: dir,
      MEDIAGATE_DATABASE_URL: databaseUrl,
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_RATE_LIMIT: 'off',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      ...env,
    });
    return createGateway(config, { providers: [provider], routes: { '*': [{ provider: provider.id, priority: 0, weight: 1 }] }, runnerPollMs: 600_000 });
  };
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await database.empty();
    api = await gateway({ MEDIAGATE_WORKERS: '0' });
    worker = await gateway({ MEDIAGATE_LEASE_SECONDS: '900' }); // its lease renewals (which would notice a cancel) are 5 minutes apart
    expect(api.runner).toBeUndefined();
    worker.runner!.start(); // finds nothing now; its next poll is ten minutes away
    key = (await createApiKey(api.store.keys, 'alice')).secret;
  });
  afterAll(async () => {
    await worker?.close(1000);
    await api?.close(1000);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  const submit = async (): Promise<string> => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'pic', prompt: 'a fox' },
    });
    expect(res.statusCode).toBe(200);
    return res.json().id as string;
  };

  it("a submit on the API process wakes the worker process at once; a cancel there stops the worker's generation at once", async () => {
    const id = await submit();
    await waitFor(() => (provider.started.includes(id) ? true : undefined), 10_000, 'the worker to start the task');
    expect(await worker.store.tasks.get(id)).toMatchObject({ status: 'processing', leaseOwner: worker.runner!.workerId });
    const task = (await api.store.tasks.get(id))!;
    expect(await cancelTask(api.store.tasks, task, null)).toMatchObject({ status: 'cancelled' });
    await waitFor(() => (provider.aborted.includes(id) ? true : undefined), 10_000, 'the worker to abort the cancelled task');
    await waitFor(() => (worker.runner!.inFlight === 0 ? true : undefined), 10_000, 'the worker to let the task go');
    expect((await api.store.tasks.get(id))?.status).toBe('cancelled');
  });

  it('a long-poll on the API process is answered when the worker process changes the task', async () => {
    const id = await submit();
    await waitFor(() => (provider.started.includes(id) ? true : undefined), 10_000, 'the worker to start the task');
    const read = vi.spyOn(api.store.tasks, 'getOwnedByKeyHash');
    const poll = api.app.inject({ method: 'GET', url: `/v1/result/${id}?wait=60`, headers: { authorization: `Bearer ${key}` } });
    let answered = false;
    void poll.finally(() => {
      answered = true;
    });
    // the poll has read the task (processing) and now waits; only then is it changed, from the worker's process
    await waitFor(() => read.mock.results[0], 10_000, 'the poll to read its task');
    await read.mock.results[0]!.value;
    read.mockRestore();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    const task = (await worker.store.tasks.get(id))!;
    await cancelTask(worker.store.tasks, task, null);
    const res = await poll;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'cancelled' });
  });
});
