/**
 * `GET /v1/tasks/{id}/events` (G219-G220) on a listening gateway: the state at once, one event per
 * status or progress change in order, the terminal state last and then the end of the stream;
 * the owner only (404 otherwise, in the query body); a revoked key's stream ends with an error
 * event; a client that goes away frees its subscription. Runs on SQLite and (postgres-e2e) on
 * PostgreSQL. No wall-clock bound is asserted: `within` only turns "never" into a failure.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../../src/auth/keys.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { WaitSlots } from '../../src/store/types.js';
import { claimNextTask, completeTask } from '../../src/tasks/states.js';
import { ElsewhereChanges } from '../../src/tasks/elsewhere.js';
import { type StreamRefusal, type TaskSubscription, TaskStreams } from '../../src/tasks/task-stream.js';
import { TaskWatch } from '../../src/tasks/task-watch.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { SseReader } from '../helpers/sse-events.js';
import { newTask } from '../cases/store-contract.case.js';
import { within } from '../helpers/within.js';
import { insertTask } from '../helpers/task-rows.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

const GENEROUS_MS = 10_000;
let h: Harness;
let url: string;
beforeAll(async () => {
  h = await createHarness({ workers: false, streamHeartbeatMs: 100 });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await h.close();
});

async function createPic(key = h.key): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(key), payload: { model: 'pic', prompt: 'x' } });
  expect(res.statusCode).toBe(200);
  return res.json().id as string;
}
const openStream = (id: string, key = h.key): Promise<Response> => fetch(`${url}/v1/tasks/${id}/events`, { headers: h.auth(key) });
const queryBody = async (id: string) => (await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() })).json();
const next = (r: SseReader, what: string) => within(r.next(), GENEROUS_MS, what);

describe('GET /v1/tasks/{id}/events', () => {
  it('the state at once, then each status and progress change in order, the terminal state last; then the stream ends', async () => {
    const id = await createPic();
    const res = await openStream(id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const r = new SseReader(res);
    const first = await next(r, 'the current state');
    expect(first).toEqual({ id: '1', data: await queryBody(id) });
    expect(first!.data.status).toBe('queued');

    const task = (await claimNextTask(h.store.tasks, ['sandbox'], 'w1', 60_000))!;
    expect(task.id).toBe(id);
    expect(await next(r, 'processing')).toEqual({ id: '2', data: await queryBody(id) });
    expect(await h.store.tasks.setProgress(id, 'w1', 40)).toBe(true);
    expect(await next(r, 'progress 40')).toEqual({ id: '3', data: expect.objectContaining({ status: 'processing', progress: 40 }) });
    // a write that changes neither status nor progress is no event: the next one is progress 70
    expect(await h.store.tasks.renewLease(id, 'w1', Date.now() + 60_000)).toBe(true);
    expect(await h.store.tasks.setProgress(id, 'w1', 70)).toBe(true);
    expect(await next(r, 'progress 70')).toEqual({ id: '4', data: expect.objectContaining({ status: 'processing', progress: 70 }) });
    expect(await completeTask(h.store.tasks, task, 'w1', { files: [] }, Date.now() + 3_600_000)).toBeDefined();
    const last = await next(r, 'the terminal state');
    expect(last).toEqual({ id: '5', data: await queryBody(id) });
    expect(last!.data.status).toBe('completed');
    expect(await within(r.next(), GENEROUS_MS, 'the end of the stream')).toBeUndefined();
    await waitFor(() => h.gateway.streams.size === 0 || undefined, GENEROUS_MS, 'the subscription to be freed');
  });

  it('a finished task: its state, then the end', async () => {
    const id = await createPic();
    const task = (await claimNextTask(h.store.tasks, ['sandbox'], 'w2', 60_000))!;
    await completeTask(h.store.tasks, task, 'w2', { files: [] }, Date.now() + 3_600_000);
    const events = await within(new SseReader(await openStream(id)).rest(), GENEROUS_MS, 'the whole stream');
    expect(events).toEqual([{ id: '1', data: await queryBody(id) }]);
  });

  it('after the final event an id-only block `final`; a reconnect sending it back to the finished task is a 204, another Last-Event-ID streams again (G460)', async () => {
    const id = await createPic();
    const task = (await claimNextTask(h.store.tasks, ['sandbox'], 'w-final', 60_000))!;
    await completeTask(h.store.tasks, task, 'w-final', { files: [] }, Date.now() + 3_600_000);
    const text = await within(
      openStream(id).then((r) => r.text()),
      GENEROUS_MS,
      'the whole stream',
    );
    // the final state's event, then the id EventSource keeps (a block without data dispatches nothing)
    expect(text).toBe(`id: 1\ndata: ${JSON.stringify(await queryBody(id))}\n\nid: final\n\n`);

    const reconnect = (taskId: string, lastEventId: string, key = h.key) =>
      fetch(`${url}/v1/tasks/${taskId}/events`, { headers: { ...h.auth(key), 'last-event-id': lastEventId } });
    const stopped = await reconnect(id, 'final');
    expect(stopped.status).toBe(204);
    expect(await stopped.text()).toBe('');
    // a client whose last event was not the final one gets the final state
    const behind = await reconnect(id, '1');
    expect(behind.status).toBe(200);
    expect(await within(new SseReader(behind).rest(), GENEROUS_MS, 'the whole stream')).toEqual([{ id: '1', data: await queryBody(id) }]);
    // the owner check comes first; a task not finished streams whatever the header says
    expect((await reconnect(id, 'final', h.otherKey)).status).toBe(404);
    const running = await createPic();
    const open = await reconnect(running, 'final');
    expect(open.status).toBe(200);
    const r = new SseReader(open);
    expect((await next(r, 'the current state'))!.data.status).toBe('queued');
    await r.cancel();
  });

  it("another key's task and an unknown id are 404 in the query endpoint's body", async () => {
    const id = await createPic();
    const theirs = await openStream(id, h.otherKey);
    expect(theirs.status).toBe(404);
    const query = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth(h.otherKey) });
    expect(await theirs.json()).toEqual(query.json());
    expect((await openStream('task_nope')).status).toBe(404);
    expect((await openStream('task_%00')).status).toBe(404); // an id PostgreSQL cannot even compare
    expect((await fetch(`${url}/v1/tasks/${id}/events`)).status).toBe(401);
  });

  it("a client that goes away frees its subscription; a revoked key's stream ends with an error event", async () => {
    const id = await createPic();
    const r = new SseReader(await openStream(id));
    expect((await next(r, 'the current state'))!.data.status).toBe('queued');
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    expect(h.gateway.streams.openFor(keyId)).toBe(1);
    await r.cancel();
    await waitFor(() => (h.gateway.streams.size === 0 && h.gateway.streams.openFor(keyId) === 0) || undefined, GENEROUS_MS, 'the subscription to be freed');

    // a client gone while its task was still being read (before the request was tracked): the
    // stream that follows must not hold its subscription until the task ends
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reading!: () => void;
    const read = new Promise<void>((resolve) => {
      reading = resolve;
    });
    const getOwned = h.store.tasks.getOwned.bind(h.store.tasks);
    h.store.tasks.getOwned = async (...args) => {
      reading();
      await gate;
      return getOwned(...args);
    };
    const subscribe = h.gateway.streams.subscribe.bind(h.gateway.streams);
    let subscribed: Promise<unknown> | undefined;
    h.gateway.streams.subscribe = (...args) => {
      const p = subscribe(...args);
      subscribed = p;
      return p;
    };
    try {
      const early = new AbortController();
      const serverSide = new Promise<void>((resolve) => h.app.server.once('request', (_req, res) => res.once('close', () => resolve())));
      const opened = fetch(`${url}/v1/tasks/${id}/events`, { headers: h.auth(), signal: early.signal }).catch(() => undefined);
      await within(read, GENEROUS_MS, 'the task to be read');
      early.abort();
      await opened;
      await within(serverSide, GENEROUS_MS, 'the server to see the client gone');
      release();
      await waitFor(() => subscribed, GENEROUS_MS, 'the subscription');
      await subscribed;
      await waitFor(
        () => (h.gateway.streams.size === 0 && h.gateway.streams.openFor(keyId) === 0) || undefined,
        GENEROUS_MS,
        'the subscription of a client already gone to be freed',
      );
    } finally {
      release();
      h.store.tasks.getOwned = getOwned;
      h.gateway.streams.subscribe = subscribe;
    }

    const { secret, record } = await createApiKey(h.store.keys, 'to-revoke');
    const mine = await createPic(secret);
    const revoked = new SseReader(await openStream(mine, secret));
    expect((await next(revoked, 'the current state'))!.data.status).toBe('queued');
    await h.store.keys.revoke(record.id, Date.now());
    const error = await next(revoked, 'the error event');
    expect(error).toMatchObject({ event: 'error', data: { error: { code: 'invalid_api_key' } } });
    expect(await within(revoked.next(), GENEROUS_MS, 'the end of the stream')).toBeUndefined();
    await waitFor(() => h.gateway.streams.size === 0 || undefined, GENEROUS_MS, 'the subscription to be freed');
  });
});

describe('heartbeat', () => {
  it('a quiet stream carries `: ping` comments and no event', async () => {
    const id = await createPic();
    const r = new SseReader(await openStream(id));
    expect((await next(r, 'the current state'))!.id).toBe('1');
    const pinged = waitFor(() => r.comments.length >= 2 || undefined, GENEROUS_MS, 'two pings');
    const more = r.next(); // reads on while the pings arrive; nothing changes, so no event comes
    await pinged;
    expect(r.comments.every((c) => c === ': ping')).toBe(true);
    await r.cancel();
    expect(await more).toBeUndefined();
  });
});

/** The subscription, failing the test when the stream was refused. */
function opened(sub: TaskSubscription | StreamRefusal): TaskSubscription {
  if ('refused' in sub) throw new Error(`the stream was refused (${sub.refused})`);
  return sub;
}

describe('TaskStreams bounds', () => {
  it("per key (in this process and through the store's slots); closing frees the slot; a full key is refused", async () => {
    const store = openMemoryStore();
    const held = new Map<string, number>();
    const slots: WaitSlots = {
      take: async (keyId, max) => {
        const n = held.get(keyId) ?? 0;
        if (n >= max) return undefined;
        expect(keyId).toMatch(/^stream:/); // apart from the key's long-poll slots
        held.set(keyId, n + 1);
        let done = false;
        return () => {
          if (!done) {
            done = true;
            held.set(keyId, held.get(keyId)! - 1);
          }
        };
      },
    };
    const streams = new TaskStreams(store.tasks, { maxStreamsPerKey: 2, slots });
    try {
      const t = await insertTask(store.tasks, newTask());
      const seen: string[] = [];
      const a = opened(await streams.subscribe(t.id, 'key_a', (task) => seen.push(task!.status)));
      const b = opened(await streams.subscribe(t.id, 'key_a', () => undefined));
      expect(await streams.subscribe(t.id, 'key_a', () => undefined)).toEqual({ refused: 'key' });
      expect(held.get('stream:key_a')).toBe(2);
      const other = opened(await streams.subscribe(t.id, 'key_b', () => undefined));
      a.close();
      a.close();
      expect(held.get('stream:key_a')).toBe(1);
      const c = opened(await streams.subscribe(t.id, 'key_a', () => undefined));
      // another process holding the key's slots: refused here though this process has room
      c.close();
      b.close();
      held.set('stream:key_a', 2);
      expect(await streams.subscribe(t.id, 'key_a', () => undefined)).toEqual({ refused: 'key' });
      other.close();
      expect(streams.size).toBe(0);
      await waitFor(() => seen.length > 0 || undefined, GENEROUS_MS, 'the read after subscribing');
      expect(seen[0]).toBe('queued');
    } finally {
      streams.close();
      await store.close();
    }
  });

  it("says which bound refused: the process's, or the store that cannot count the key's slots (G220)", async () => {
    const store = openMemoryStore();
    const full = new TaskStreams(store.tasks, { maxStreams: 1 });
    const failing = new TaskStreams(store.tasks, {
      slots: {
        take: async () => {
          throw new Error('the store is unreachable');
        },
      },
    });
    try {
      const t = await insertTask(store.tasks, newTask());
      const first = opened(await full.subscribe(t.id, 'key_a', () => undefined));
      expect(await full.subscribe(t.id, 'key_b', () => undefined)).toEqual({ refused: 'process' });
      first.close();
      expect(await failing.subscribe(t.id, 'key_a', () => undefined)).toEqual({ refused: 'store' });
      expect(failing.size).toBe(0);
    } finally {
      full.close();
      failing.close();
      await store.close();
    }
  });

  it('the 429 names the bound that refused the stream, with Retry-After', async () => {
    const id = await createPic();
    const subscribe = h.gateway.streams.subscribe.bind(h.gateway.streams);
    try {
      const messages: Record<string, string> = {};
      for (const refused of ['process', 'key', 'store'] as const) {
        h.gateway.streams.subscribe = async () => ({ refused });
        const res = await openStream(id);
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('5');
        const error = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('rate_limited');
        messages[refused] = error.message;
      }
      expect(messages.key).toMatch(/This API key already has 100 status streams open/);
      expect(messages.process).toMatch(/This gateway process has 10000 status streams open/);
      expect(messages.store).toMatch(/cannot count this API key's status streams/);
    } finally {
      h.gateway.streams.subscribe = subscribe;
    }
  });

  it('renews its cross-process slot (a new one before the old is dropped) while open; closed, it holds none', async () => {
    const store = openMemoryStore();
    const live = new Set<number>();
    let taken = 0;
    const slots: WaitSlots = {
      take: async (_keyId, max) => {
        if (live.size >= max) return undefined;
        const n = ++taken;
        live.add(n);
        return () => {
          live.delete(n);
        };
      },
    };
    const streams = new TaskStreams(store.tasks, { maxStreamsPerKey: 1, slots, slotMs: 40 });
    try {
      const t = await insertTask(store.tasks, newTask());
      const sub = opened(await streams.subscribe(t.id, 'key_a', () => undefined));
      await waitFor(() => taken >= 4 || undefined, GENEROUS_MS, 'three renewals');
      expect(live.size).toBe(1);
      expect(await streams.subscribe(t.id, 'key_a', () => undefined)).toEqual({ refused: 'key' });
      sub.close();
      expect(live.size).toBe(0);
      const after = taken;
      await new Promise((r) => setTimeout(r, 100)); // renewal timers are gone: no slot is taken any more
      expect(taken).toBe(after);
    } finally {
      streams.close();
      await store.close();
    }
  });
});

describe('a SQLite file shared with another process', () => {
  it("a long-poll waiter and a stream of this process both learn of the other connection's write (one shared look at changedElsewhere)", async () => {
    const file = path.join(tempDir(), 'mediagate.db');
    const here = openSqliteStore(file);
    const there = openSqliteStore(file); // another connection: its writes reach `here` only through data_version
    const elsewhere = new ElsewhereChanges(here.tasks, 20);
    const watch = new TaskWatch(here.tasks, { elsewhere });
    const streams = new TaskStreams(here.tasks, { elsewhere });
    try {
      const t = await insertTask(here.tasks, newTask());
      const statuses: string[] = [];
      const sub = opened(await streams.subscribe(t.id, 'key_a', (task) => statuses.push(task!.status)));
      await waitFor(() => statuses.length > 0 || undefined, GENEROUS_MS, 'the first read');
      const released = watch.waitForChange(t.id, 'queued', 'key_a', 60_000, new AbortController().signal);
      expect(await there.tasks.claimNext(['sandbox'], 'w-there', Date.now(), Date.now() + 60_000)).toBeDefined();
      await within(released, GENEROUS_MS, 'the long-poll waiter to be released');
      await waitFor(() => statuses.includes('processing') || undefined, GENEROUS_MS, 'the stream to see processing');
      sub.close();
    } finally {
      watch.close();
      streams.close();
      await there.close();
      await here.close();
    }
  });
});
