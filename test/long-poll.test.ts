import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite/open.js';
import { claimNextTask, completeTask } from '../src/tasks/states.js';
import { TaskWatch } from '../src/tasks/task-watch.js';
import { createHarness, tempDir, type Harness } from './helpers/harness.js';
import { newTask } from './store-contract.case.js';

// Long-poll: `?wait=N` on every query path (docs/API.md G74-G75).
let h: Harness;
beforeAll(async () => { h = await createHarness({ workers: false }); });
afterAll(async () => { await h.close(); });

async function createPic(): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'x' } });
  return res.json().id as string;
}
const poll = (url: string) => h.app.inject({ method: 'GET', url, headers: h.auth() });

describe('?wait=N', () => {
  it.each(['/v1/result/', '/v2/model-center/tasks/', '/v1/reel/videos/', '/v1/videos/'])('%s answers as soon as the status changes', async (prefix) => {
    const id = await createPic();
    const started = Date.now();
    const pending = poll(`${prefix}${id}?wait=10`);
    setTimeout(() => { claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000); }, 200);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('processing');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers after N seconds when nothing changes', async () => {
    const id = await createPic();
    const started = Date.now();
    const res = await poll(`/v1/result/${id}?wait=1`);
    const took = Date.now() - started;
    expect(res.json().status).toBe('queued');
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(3000);
  });

  it('a finished task answers at once', async () => {
    const id = await createPic();
    let claimed = claimNextTask(h.store.tasks, ['sandbox'], 'w-done', 60_000)!;
    while (claimed.id !== id) claimed = claimNextTask(h.store.tasks, ['sandbox'], 'w-done', 60_000)!; // older queued tasks first
    completeTask(h.store.tasks, claimed, 'w-done', { files: [] }, Date.now() + 60_000);
    const started = Date.now();
    expect((await poll(`/v1/result/${id}?wait=30`)).json().status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(500);
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
    const started = Date.now();
    const res = await h.app.inject({ method: 'GET', url: `/v1/result/${id}?wait=5`, headers: h.auth(h.otherKey) });
    expect(res.statusCode).toBe(404);
    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe('TaskWatch', () => {
  it('sees a change made by another connection (another process) within its poll interval', async () => {
    const file = path.join(tempDir(), 'mediagate.db');
    const api = openSqliteStore(file);
    const worker = openSqliteStore(file);
    const watch = new TaskWatch(api.tasks, { pollMs: 50 });
    try {
      const t = api.tasks.insert(newTask());
      const started = Date.now();
      const waiting = watch.waitForChange(t.id, 'queued', 'key_a', 10_000, new AbortController().signal);
      setTimeout(() => { claimNextTask(worker.tasks, ['sandbox'], 'w2', 60_000); }, 100);
      await waiting;
      expect(Date.now() - started).toBeLessThan(1000);
      expect(watch.size).toBe(0);
    } finally {
      watch.close(); api.close(); worker.close();
    }
  });

  it('is bounded per key and in all: past the bound a wait ends at once; a client that leaves frees its place', async () => {
    const store = openSqliteStore(':memory:');
    const watch = new TaskWatch(store.tasks, { maxWaitersPerKey: 2, maxWaiters: 3 });
    const t = store.tasks.insert(newTask());
    const gone = new AbortController();
    const a = watch.waitForChange(t.id, 'queued', 'k1', 60_000, gone.signal);
    void watch.waitForChange(t.id, 'queued', 'k1', 60_000, new AbortController().signal);
    expect(watch.size).toBe(2);
    const started = Date.now();
    await watch.waitForChange(t.id, 'queued', 'k1', 60_000, new AbortController().signal); // third for k1: at once
    void watch.waitForChange(t.id, 'queued', 'k2', 60_000, new AbortController().signal);
    await watch.waitForChange(t.id, 'queued', 'k3', 60_000, new AbortController().signal); // fourth in all: at once
    expect(Date.now() - started).toBeLessThan(100);
    gone.abort();
    await a;
    expect(watch.size).toBe(2);
    watch.close();
    expect(watch.size).toBe(0);
    store.close();
  });
});
