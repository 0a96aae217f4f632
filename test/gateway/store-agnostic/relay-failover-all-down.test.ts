/**
 * Every candidate down (G91), gateway to gateway: a relaying mediagate routes every
 * model to relay channel `a`, then `b`, and both upstreams' proxies refuse connections. While the
 * circuits are closed, submits are accepted and the tasks wait in the queue without using an
 * attempt; once both circuits are open, a submit is a 503 `upstream_unavailable` with
 * `Retry-After` (the seconds until a circuit lets a probe through), stores nothing and names no
 * upstream. Once an upstream is back and the open period ended, the waiting tasks complete there.
 * The circuits' clock is stepped by the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';
import { countTasksByStatus } from '../../helpers/task-rows.js';

// what a task waits once every circuit is open (real time: a refused task is looked at again after it), and the submits' Retry-After
const OPEN_MS = 1_000;
let now = 1_000_000;
let r: RelayCandidates;
beforeAll(async () => {
  r = await startRelayCandidates({
    relaying: { breaker: { failuresToOpen: 2, openMs: OPEN_MS, maxOpenMs: OPEN_MS }, channelClock: () => now },
  });
}, 60_000);
afterAll(async () => {
  await r?.close();
});

const circuit = (id: 'a' | 'b') => r.relaying.gateway.channels.state(id);
const storedTasks = async () => Object.values(await countTasksByStatus(r.relaying.store.tasks)).reduce((sum, n) => sum + n, 0);

const TASKS: Array<[string, string, Record<string, unknown>]> = [
  ['pic', '/v1/pic/images', { model: 'pic', prompt: 'waiting' }],
  ['motion', '/v1/motion/videos', { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'waiting' }], duration: 1, ratio: '1:1' }], // the smallest video the family accepts (G417)
  ['videos', '/v1/videos/videos', { model: 'videos_fast', prompt: 'waiting', duration: 4, ratio: '9:16' }],
];

const RETRIED = { model: 'pic', prompt: 'retried after Retry-After' };
const RETRY_KEY = 'retry-after-the-outage';
const CHAT = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hello' }], max_completion_tokens: 5 };

describe('no candidate takes calls', () => {
  const ids: string[] = [];

  it('submits are accepted while the circuits are closed; the tasks wait queued without using attempts', async () => {
    await r.a.proxy.setDown(true);
    await r.b.proxy.setDown(true);
    for (const [kind, path, body] of TASKS) {
      const created = await r.call('POST', path, body);
      expect(created.status, `${kind}: ${created.text}`).toBe(200);
      ids.push((created.json.id ?? created.json.data?.projectId) as string);
    }
    // every task tried the candidates, was refused by both, and went back to the queue (it is
    // tried again after a while: caught between two tries)
    for (const id of ids) {
      const waiting = await waitFor(
        async () => {
          const t = (await r.relaying.store.tasks.get(id))!;
          return t.serverFaults >= 1 && t.status !== 'processing' ? t : undefined;
        },
        20_000,
        `task ${id} refused by every candidate`,
      );
      // waiting for a channel, since its first refusal (G274)
      expect(waiting).toMatchObject({ status: 'queued', attempts: 0, error: null, upstream: { generation: 0, unavailableSince: expect.any(Number) } });
    }
    expect(circuit('a')).toBe('open');
    expect(circuit('b')).toBe('open');
  });

  it('with every circuit open, a submit is a 503 upstream_unavailable with Retry-After, naming no upstream, storing nothing', async () => {
    const before = await storedTasks();
    for (const [kind, path, body] of TASKS) {
      const refused = await r.call('POST', path, body);
      expect(refused.status, kind).toBe(503);
      // both circuits opened at the same (stepped) instant: a probe is allowed in exactly OPEN_MS
      expect(refused.headers.get('retry-after'), kind).toBe(String(OPEN_MS / 1000));
      // each family's own error body: the videos envelope carries the status, the others the code
      expect(refused.json, kind).toMatchObject(
        kind === 'videos'
          ? { code: '503', msg: expect.stringMatching(/^No model provider for this model takes requests now/), data: null }
          : { error: { code: 'upstream_unavailable', type: 'upstream_error' } },
      );
      for (const secret of [
        r.a.proxy.url,
        r.b.proxy.url,
        `:${r.a.proxy.port}`,
        `:${r.b.proxy.port}`,
        r.a.upstream.key,
        r.b.upstream.key,
        '127.0.0.1',
        'ECONNREFUSED',
      ]) {
        expect(refused.text, kind).not.toContain(secret);
      }
    }
    // a refused submit keeps nothing of its Idempotency-Key (G72): the retry below may use it again
    expect((await r.call('POST', '/v1/pic/images', RETRIED, { 'idempotency-key': RETRY_KEY })).status).toBe(503);
    expect(await storedTasks()).toBe(before);
    // chat goes through the same channels and circuits: the same 503, in chat's own body
    const chat = await r.call('POST', '/v1/chat/completions', CHAT);
    expect(chat.status).toBe(503);
    expect(chat.headers.get('retry-after')).toBe(String(OPEN_MS / 1000));
    expect(chat.json).toMatchObject({ code: '503', success: false, data: null });
    // still waiting, no attempt used (each is looked at again once a second: caught between two looks)
    for (const id of ids) {
      const waiting = await waitFor(
        async () => {
          const t = (await r.relaying.store.tasks.get(id))!;
          return t.status !== 'processing' ? t : undefined;
        },
        10_000,
        `task ${id} between two looks`,
      );
      expect(waiting).toMatchObject({ status: 'queued', attempts: 0 });
    }
  });

  it('once an upstream is back and the open period ended, the waiting tasks complete there with their first attempt', async () => {
    await r.b.proxy.setDown(false);
    now += OPEN_MS;
    for (const id of ids) {
      const done = await r.relaying.waitForTask(id, undefined, 40_000);
      // accepted at last: the run of refusals is over (G123)
      expect(done, done.error ?? '').toMatchObject({ status: 'completed', provider: 'b', attempts: 1, serverFaults: 0 });
      expect(r.b.creates().filter((c) => c.idempotencyKey === id)).toHaveLength(1);
    }
    expect(circuit('b')).toBe('closed');
    expect(await r.a.upstreamTasks()).toBe(0);
    // submits are accepted again, the one refused before under the same Idempotency-Key too; chat is answered
    const retried = await r.call('POST', '/v1/pic/images', RETRIED, { 'idempotency-key': RETRY_KEY });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await r.relaying.waitForTask(retried.json.id as string)).status).toBe('completed');
    const chat = await r.call('POST', '/v1/chat/completions', CHAT);
    expect(chat.status, chat.text).toBe(200);
    expect(r.b.proxy.requests.filter((q) => q.url === '/v1/chat/completions')).toHaveLength(1);
  }, 60_000);
});
