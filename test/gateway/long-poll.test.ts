import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { claimNextTask, completeTask } from '../../src/tasks/states.js';
import { TaskWatch } from '../../src/tasks/task-watch.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { newTask } from '../cases/store-contract.case.js';
import { within } from '../helpers/within.js';
import { insertTask } from '../helpers/task-rows.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

// Long-poll: `?wait=N` on every query path (G74-G75).
//
// No wall-clock millisecond is asserted. A wait that must end on a change is asked for 60 s and
// checked (a) not to have answered before the change and (b) to answer after it within a generous
// 10 s: a poll that ignored the change would wait out its 60 s and fail (b), one that ignored
// `wait` would fail (a). "At once" likewise means "with wait=60, within 10 s". The only lower bound
// (it did wait N seconds when nothing changed) is causal: a timer cannot fire before its time.
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

/** A bound far below any 60 s wait and far above any scheduling delay: it only catches "waited it out". */
const GENEROUS_MS = 10_000;

async function createPic(): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'x' } });
  return res.json().id as string;
}
const poll = (url: string, key?: string) => h.app.inject({ method: 'GET', url, headers: h.auth(key) });

/** Lets the event loop go round a few times, so anything already due (an answer that did not wait) comes out. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** A promise and whether it has settled yet. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const p = promise.finally(() => {
    settled = true;
  });
  return { promise: p, settled: () => settled };
}

/**
 * Starts a long-poll of task `id` and returns once the route has read the task (so it is now
 * waiting, or has answered if it does not wait): the change the test makes next comes after it.
 */
async function startPoll(url: string, id: string) {
  const read = vi.spyOn(h.store.tasks, 'getOwnedByKeyHash');
  try {
    const pending = tracked(poll(url));
    await waitFor(() => (read.mock.calls.some(([taskId]) => taskId === id) ? true : undefined), GENEROUS_MS, 'the poll to read its task');
    await turns();
    return pending;
  } finally {
    read.mockRestore();
  }
}

/** Claims the oldest queued tasks until `id` is the one claimed (older queued tasks first). */
async function claim(id: string, worker: string) {
  let claimed = (await claimNextTask(h.store.tasks, ['sandbox'], worker, 60_000))!;
  while (claimed.id !== id) claimed = (await claimNextTask(h.store.tasks, ['sandbox'], worker, 60_000))!;
  return claimed;
}

describe('?wait=N', () => {
  it.each(['/v1/result/', '/v2/model-center/tasks/', '/v1/reel/videos/', '/v1/videos/'])('%s answers as soon as the status changes', async (prefix) => {
    const id = await createPic();
    const pending = await startPoll(`${prefix}${id}?wait=60`, id);
    expect(pending.settled()).toBe(false); // it waits: nothing has changed yet
    await claim(id, 'w-test');
    const res = await within(pending.promise, GENEROUS_MS, 'the answer after the change (a 60 s wait)');
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('processing'); // the status it waited for: after the change
  });

  it('answers after N seconds when nothing changes', async () => {
    const id = await createPic();
    const started = performance.now();
    const res = await within(poll(`/v1/result/${id}?wait=1`), GENEROUS_MS, 'the answer at the 1 s deadline');
    const took = performance.now() - started;
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('queued');
    expect(took).toBeGreaterThanOrEqual(950); // it did wait (a timer does not fire early)
  });

  it('a finished task answers at once', async () => {
    const id = await createPic();
    const claimed = await claim(id, 'w-done');
    await completeTask(h.store.tasks, claimed, 'w-done', { files: [] }, Date.now() + 60_000);
    const res = await within(poll(`/v1/result/${id}?wait=60`), GENEROUS_MS, 'the answer for a finished task (a 60 s wait)');
    expect(res.json().status).toBe('completed');
  });

  it.each(['61', '-1', 'abc', '1.5'])('wait=%s is a 400 naming wait', async (wait) => {
    const id = await createPic();
    const res = await poll(`/v1/result/${id}?wait=${wait}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.param).toBe('wait');
    expect(res.json().error.message).toMatch(/a whole number of seconds from 0 to 60/);
  });

  it('another key still gets 404 and waits for nothing', async () => {
    const id = await createPic();
    const res = await within(poll(`/v1/result/${id}?wait=60`, h.otherKey), GENEROUS_MS, "the 404 for another key's task (a 60 s wait)");
    expect(res.statusCode).toBe(404);
  });
});

describe('TaskWatch', () => {
  it('sees a change made by another connection (another process) within its poll interval', async () => {
    const file = path.join(tempDir(), 'mediagate.db');
    const api = openSqliteStore(file);
    const worker = openSqliteStore(file);
    const watch = new TaskWatch(api.tasks, { pollMs: 50 });
    try {
      const t = await insertTask(api.tasks, newTask());
      const waiting = tracked(watch.waitForChange(t.id, 'queued', 'key_a', 60_000, new AbortController().signal));
      expect(watch.size).toBe(1);
      // A few poll intervals with nothing changed: the waiter stays.
      await new Promise((r) => setTimeout(r, 200));
      expect(waiting.settled()).toBe(false);
      expect(watch.size).toBe(1);
      await claimNextTask(worker.tasks, ['sandbox'], 'w2', 60_000); // the other connection: no in-process notice
      await within(waiting.promise, GENEROUS_MS, 'the waiter after a change elsewhere (a 60 s wait)');
      expect((await worker.tasks.get(t.id))!.status).toBe('processing');
      expect(watch.size).toBe(0);
    } finally {
      watch.close();
      await api.close();
      await worker.close();
    }
  });

  it('is bounded per key and in all: past the bound a wait ends at once; a client that leaves frees its place', async () => {
    const store = openMemoryStore();
    const watch = new TaskWatch(store.tasks, { maxWaitersPerKey: 2, maxWaiters: 3 });
    const t = await insertTask(store.tasks, newTask());
    const gone = new AbortController();
    const a = tracked(watch.waitForChange(t.id, 'queued', 'k1', 60_000, gone.signal));
    const b = tracked(watch.waitForChange(t.id, 'queued', 'k1', 60_000, new AbortController().signal));
    expect(watch.size).toBe(2);
    // "At once": resolved before any timer or I/O turn, and never counted as a waiter.
    const thirdForK1 = tracked(watch.waitForChange(t.id, 'queued', 'k1', 60_000, new AbortController().signal));
    expect(watch.size).toBe(2);
    const firstForK2 = tracked(watch.waitForChange(t.id, 'queued', 'k2', 60_000, new AbortController().signal));
    expect(watch.size).toBe(3);
    const fourthInAll = tracked(watch.waitForChange(t.id, 'queued', 'k3', 60_000, new AbortController().signal));
    expect(watch.size).toBe(3);
    await new Promise((r) => setImmediate(r));
    expect(thirdForK1.settled()).toBe(true);
    expect(fourthInAll.settled()).toBe(true);
    expect([a.settled(), b.settled(), firstForK2.settled()]).toEqual([false, false, false]);
    gone.abort();
    await a.promise;
    expect(watch.size).toBe(2);
    watch.close();
    expect(watch.size).toBe(0);
    await Promise.all([b.promise, firstForK2.promise]); // close releases every waiter
    await store.close();
  });
});
