import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mediaRefs } from '../../../src/contract/media-refs.js';
import { createLogger } from '../../../src/logger.js';
import { FsBlobStore } from '../../../src/media/fs-blob-store.js';
import { Channels } from '../../../src/providers/channels.js';
import { ProviderRegistry } from '../../../src/providers/registry.js';
import { createSandboxProvider } from '../../../src/providers/sandbox/index.js';
import type { Provider, ProviderJob } from '../../../src/providers/types.js';
import { openSqliteStore } from '../../../src/store/sqlite/open.js';
import type { Store, TaskStore } from '../../../src/store/types.js';
import { ResultStorage } from '../../../src/tasks/result-storage.js';
import { TaskRunner } from '../../../src/tasks/runner.js';
import { claimNextTask } from '../../../src/tasks/states.js';
import { tempDir } from '../../helpers/temp-root.js';
import { waitFor } from '../../helpers/wait-for.js';
import { newTask } from '../../cases/store-contract.case.js';
import { insertTask } from '../../helpers/task-rows.js';

const log = createLogger('silent');
// The tests of retries give the runner a first retry delay of 50 ms instead of 1 s (G278): they are
// about what a retry does; the delays themselves are backoff.ts's, asserted by its unit test.
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup() {
  const dir = tempDir();
  const file = path.join(dir, 'mediagate.db');
  const open = (): Store => {
    const s = openSqliteStore(file);
    cleanups.push(() => s.close());
    return s;
  };
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, open };
}

/**
 * A provider that records each call and makes a tiny file after `delayMs` (or, given `gate`, once
 * the test opens it), honouring the abort signal.
 */
function countingProvider(delayMs = 20, gate?: Promise<void>) {
  const calls = new Map<string, number>();
  const aborted = new Set<string>();
  const provider: Provider = {
    id: 'sandbox',
    capabilities: { families: ['pic'] },
    async start(job: ProviderJob, ctx) {
      calls.set(job.taskId, (calls.get(job.taskId) ?? 0) + 1);
      await new Promise<void>((resolve, reject) => {
        const t = gate ? undefined : setTimeout(resolve, delayMs);
        void gate?.then(resolve);
        ctx.signal.addEventListener(
          'abort',
          () => {
            aborted.add(job.taskId);
            clearTimeout(t);
            reject(new Error('aborted'));
          },
          { once: true },
        );
      });
      return { state: 'done', output: { files: [{ name: 'out.png', contentType: 'image/png', data: Buffer.from('png') }] } };
    },
  };
  return { provider, calls, aborted };
}

function runner(store: Store, dir: string, provider: Provider, over: Partial<ConstructorParameters<typeof TaskRunner>[0]> & { blobs?: FsBlobStore } = {}) {
  const tmp = path.join(dir, `tmp-${Math.random().toString(36).slice(2)}`);
  fs.mkdirSync(tmp, { recursive: true });
  const { blobs = new FsBlobStore(path.join(dir, 'results')), ...rest } = over;
  const r = new TaskRunner({
    store: store.tasks,
    providers: new ProviderRegistry([provider]),
    log,
    channels: new Channels({ log, concurrencyOf: () => 4 }),
    results: new ResultStorage({ blobs, tmpDir: tmp, allowPrivate: true }),
    tmpDir: tmp,
    concurrency: 4,
    maxAttempts: 3,
    leaseMs: 30_000,
    videosResultTtlHours: 24,
    fetchMedia: async () => Buffer.alloc(0),
    mediaUrl: (_taskId, ref) => ref.url,
    pollMs: 50,
    ...rest,
  });
  cleanups.push(() => r.stop(500));
  return r;
}

describe('task engine', () => {
  it('claims that answer later (a networked store) never run a provider past its slots, however often the runner is woken', async () => {
    const { dir, open } = setup();
    const store = open();
    const ids = await Promise.all(Array.from({ length: 12 }, async () => (await insertTask(store.tasks, newTask())).id));
    // each claim answers only after a timer: finishing work and wakes interleave with claims in flight
    const slow: TaskStore = Object.create(store.tasks, {
      claimNext: { value: (...args: Parameters<TaskStore['claimNext']>) => new Promise((r) => setTimeout(r, 10)).then(() => store.tasks.claimNext(...args)) },
    });
    let running = 0;
    let most = 0;
    const provider: Provider = {
      id: 'sandbox',
      capabilities: { families: ['pic'] },
      async start() {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 15));
        running--;
        return { state: 'done', output: { files: [{ name: 'out.png', contentType: 'image/png', data: Buffer.from('png') }] } };
      },
    };
    const r = runner({ ...store, tasks: slow }, dir, provider, { concurrency: 2 });
    r.start();
    const waking = setInterval(() => r.wake(), 1);
    cleanups.push(() => clearInterval(waking));
    await waitFor(
      async () => ((await Promise.all(ids.map((id) => store.tasks.get(id)))).every((t) => t?.status === 'completed') ? true : undefined),
      15_000,
      'all 12 done',
    );
    expect(most).toBe(2);
    // a task is completed in the store before its worker lets go of its slot (the runner's last
    // steps after the terminal write): the slot is freed soon after, not necessarily by now
    await waitFor(() => (r.inFlight === 0 ? true : undefined), 5_000, 'the runner to let go of its slots');
  });

  it('a task whose worker died (lease lapsed) is finished by another worker', async () => {
    const { dir, open } = setup();
    const a = open();
    const b = open();
    const task = await insertTask(a.tasks, newTask());
    // Worker "dead" claims it with a short lease and never renews: as after kill -9.
    expect((await claimNextTask(a.tasks, ['sandbox'], 'dead-worker', 200))?.id).toBe(task.id);
    const { provider, calls } = countingProvider();
    runner(b, dir, provider, { leaseMs: 600 }).start();
    const done = await waitFor(
      async () => {
        const t = await b.tasks.get(task.id);
        return t?.status === 'completed' ? t : undefined;
      },
      10_000,
      'recovery',
    );
    expect(done.attempts).toBe(2);
    expect(calls.get(task.id)).toBe(1);
    const name = done.result!.files[0]!.name;
    expect(name).toMatch(/^out\.[0-9a-f]{8}\.png$/);
    expect(fs.existsSync(path.join(dir, 'results', task.id, name))).toBe(true);
  });

  it("the lapsed-lease sweep goes through the store's runAlone: while another process runs it, this one recovers nothing", async () => {
    const { dir, open } = setup();
    const a = open();
    const task = await insertTask(a.tasks, newTask());
    expect((await claimNextTask(a.tasks, ['sandbox'], 'dead-worker', 200))?.id).toBe(task.id);
    const { provider, calls } = countingProvider();
    const jobs: string[] = [];
    let othersRunIt = true;
    const runAlone = async (name: string, fn: () => Promise<void>): Promise<boolean> => {
      jobs.push(name);
      if (othersRunIt) return false; // the lock is held elsewhere: this run is skipped
      await fn();
      return true;
    };
    runner(open(), dir, provider, { leaseMs: 600, runAlone }).start();
    await waitFor(() => (jobs.length >= 3 ? true : undefined), 10_000, 'three sweeps to be asked for');
    expect(new Set(jobs)).toEqual(new Set(['lapsed-leases']));
    expect(await a.tasks.get(task.id)).toMatchObject({ status: 'processing', leaseOwner: 'dead-worker' });
    othersRunIt = false; // the other process is gone: the next sweep here recovers the task
    await waitFor(async () => ((await a.tasks.get(task.id))?.status === 'completed' ? true : undefined), 10_000, 'recovery');
    expect(calls.get(task.id)).toBe(1);
  });

  it('a task whose workers keep dying fails with a clear error after the last attempt', async () => {
    const { dir, open } = setup();
    const a = open();
    const task = await insertTask(a.tasks, newTask());
    await claimNextTask(a.tasks, ['sandbox'], 'dead-worker', 100);
    const { provider, calls } = countingProvider();
    runner(open(), dir, provider, { maxAttempts: 1, leaseMs: 600 }).start();
    const done = await waitFor(
      async () => {
        const t = await a.tasks.get(task.id);
        return t?.status === 'failed' ? t : undefined;
      },
      10_000,
      'failure',
    );
    expect(done.error).toMatch(/worker running it stopped responding 1 time\(s\); giving up/);
    expect(calls.size).toBe(0);
  });

  it('two workers on one database run every task exactly once', async () => {
    const { dir, open } = setup();
    const s1 = open();
    const s2 = open();
    const ids = await Promise.all(Array.from({ length: 40 }, async () => (await insertTask(s1.tasks, newTask())).id));
    const p1 = countingProvider(5);
    const p2 = countingProvider(5);
    runner(s1, dir, p1.provider).start();
    runner(s2, dir, p2.provider).start();
    await waitFor(
      async () => ((await Promise.all(ids.map((id) => s1.tasks.get(id)))).every((t) => t?.status === 'completed') ? true : undefined),
      15_000,
      'all done',
    );
    for (const id of ids) expect((p1.calls.get(id) ?? 0) + (p2.calls.get(id) ?? 0)).toBe(1);
    expect(p1.calls.size).toBeGreaterThan(0);
    expect(p2.calls.size).toBeGreaterThan(0);
  });

  it('a provider that never answers (ignoring its signal) is stopped per attempt, retried, then failed: never stuck in processing', async () => {
    const { dir, open } = setup();
    const s = open();
    let calls = 0;
    const hanging: Provider = {
      id: 'sandbox',
      capabilities: { families: ['pic'] },
      start: () => {
        calls++;
        return new Promise(() => undefined);
      }, // never settles, never looks at the signal
    };
    const t = await insertTask(s.tasks, newTask());
    runner(s, dir, hanging, { attemptTimeoutMs: 150, maxAttempts: 2, backoffScale: 0.05 }).start();
    const done = await waitFor(
      async () => {
        const r = await s.tasks.get(t.id);
        return r?.status === 'failed' ? r : undefined;
      },
      10_000,
      'timeout failure',
    );
    expect(done.error).toMatch(/^generation did not finish within \d+ s \(attempt 2 of 2\)$/);
    expect(calls).toBe(2);
    expect(done.attempts).toBe(2);
  });

  it('retryable failures that keep coming end in failed after the last attempt, with the error', async () => {
    const { dir, open } = setup();
    const s = open();
    const failing: Provider = {
      id: 'sandbox',
      capabilities: { families: ['pic'] },
      start: async () => {
        throw new Error('upstream answered 503');
      },
    };
    const t = await insertTask(s.tasks, newTask());
    runner(s, dir, failing, { maxAttempts: 2, backoffScale: 0.05 }).start();
    const done = await waitFor(
      async () => {
        const r = await s.tasks.get(t.id);
        return r?.status === 'failed' ? r : undefined;
      },
      10_000,
      'failure',
    );
    expect(done).toMatchObject({ status: 'failed', attempts: 2, error: 'generation failed: upstream answered 503' });
  });

  it('a retryable failure is retried with backoff, then completes', async () => {
    const { dir, open } = setup();
    const s = open();
    const t = await insertTask(
      s.tasks,
      newTask({ request: { params: { prompt: 'x [flaky]' }, output: { kind: 'image', width: 64, height: 64, format: 'png' }, media: mediaRefs() } }),
    );
    runner(s, dir, createSandboxProvider({ timing: 'instant' }), { backoffScale: 0.05 }).start();
    const done = await waitFor(
      async () => {
        const r = await s.tasks.get(t.id);
        return r?.status === 'completed' || r?.status === 'failed' ? r : undefined;
      },
      10_000,
      'retry',
    );
    expect(done.status).toBe('completed');
    expect(done.attempts).toBe(2);
  });

  it('a graceful stop returns a running task to the queue and gives its attempt back', async () => {
    const { dir, open } = setup();
    const s = open();
    const t = await insertTask(s.tasks, newTask());
    const slow = countingProvider(60_000);
    const r = runner(s, dir, slow.provider);
    r.start();
    await waitFor(async () => ((await s.tasks.get(t.id))?.status === 'processing' ? true : undefined), 5000, 'claim');
    await r.stop(100);
    expect(await s.tasks.get(t.id)).toMatchObject({ status: 'queued', attempts: 0, leaseOwner: null });
  });

  it('a worker that lost its lease stops and does not overwrite the new owner', async () => {
    const { dir, open } = setup();
    const s = open();
    const t = await insertTask(s.tasks, newTask());
    const slow = countingProvider(60_000);
    runner(s, dir, slow.provider, { leaseMs: 600 }).start();
    await waitFor(async () => ((await s.tasks.get(t.id))?.status === 'processing' ? true : undefined), 5000, 'claim');
    // Someone else takes the task over (as after a lapse); the heartbeat notices and aborts.
    await s.tasks.updateIf(t.id, { statusIn: ['processing'] }, { leaseOwner: 'other-worker', leaseExpiresAt: Date.now() + 60_000 });
    await waitFor(() => (slow.aborted.has(t.id) ? true : undefined), 10_000, 'the old worker to abort');
    expect(await s.tasks.get(t.id)).toMatchObject({ status: 'processing', leaseOwner: 'other-worker' });
  });

  it('a worker that finishes after losing the task leaves the real result untouched and removes its own files', async () => {
    const { dir, open } = setup();
    const s = open();
    const t = await insertTask(s.tasks, newTask());
    // The late worker generates until the test lets it finish: after the takeover below.
    let finishGenerating!: () => void;
    const slow = countingProvider(
      0,
      new Promise<void>((resolve) => {
        finishGenerating = resolve;
      }),
    );
    // The late worker's blob store, observed: what it stores and what it removes again.
    const blobs = new FsBlobStore(path.join(dir, 'results'));
    const put = vi.spyOn(blobs, 'put');
    const removed = vi.spyOn(blobs, 'remove');
    const late = runner(s, dir, slow.provider, { blobs });
    late.start();
    await waitFor(async () => ((await s.tasks.get(t.id))?.status === 'processing' ? true : undefined), 5000, 'claim');
    // Another worker takes over and completes first (the heartbeat has not noticed yet).
    const taken = (await s.tasks.updateIf(t.id, { statusIn: ['processing'] }, { leaseOwner: 'winner', leaseExpiresAt: Date.now() + 60_000 }))!;
    const winnerFile = path.join(dir, 'results', t.id, 'out.winner.png');
    fs.mkdirSync(path.dirname(winnerFile), { recursive: true });
    fs.writeFileSync(winnerFile, 'winner');
    await s.tasks.updateIf(
      t.id,
      { statusIn: ['processing'], leaseOwner: 'winner' },
      {
        status: 'completed',
        result: { files: [{ name: 'out.winner.png', contentType: 'image/png', bytes: 6 }] },
        leaseOwner: null,
        finishedAt: Date.now(),
      },
    );
    expect(taken.leaseOwner).toBe('winner');
    await waitFor(() => (slow.calls.get(t.id) === 1 ? true : undefined), 10_000, 'the late worker to run');
    finishGenerating();
    // The late worker is done with the task (its attempt, storing and clean-up included) once the
    // runner is idle again: only then is there anything to check.
    await waitFor(() => (late.inFlight === 0 ? true : undefined), 10_000, 'the late worker to finish its attempt');
    expect(slow.aborted.has(t.id)).toBe(false); // it was not stopped: it finished generating
    // It did store its file, under a name of its own, and removed exactly that file again.
    const stored = put.mock.calls.filter(([id]) => id === t.id).map(([, name]) => name);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatch(/^out\.[0-9a-f]{8}\.png$/);
    expect(removed.mock.calls.filter(([id]) => id === t.id).map(([, name]) => name)).toEqual(stored);
    expect(fs.readdirSync(path.dirname(winnerFile))).toEqual(['out.winner.png']);
    expect(fs.readFileSync(winnerFile, 'utf8')).toBe('winner');
    expect((await s.tasks.get(t.id))?.result?.files[0]?.name).toBe('out.winner.png');
  });
});
