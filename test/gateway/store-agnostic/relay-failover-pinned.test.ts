/**
 * Checks and cancel stay with the channel that accepted the create (G90, G93): a
 * relaying mediagate routes every model to relay channel `a`, then `b`. Whichever channel took the
 * create gets every check and the cancel; the other channel, faulted or healthy, gets none, and
 * its upstream holds nothing. `b`'s upstream holds each generation (its sandbox does not start
 * it) until the test lets it go or it is cancelled, so its tasks are checked many times while they run
 * (G268: the order is caused, not timed).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { heldSandbox } from '../../helpers/held-sandbox.js';
import { within } from '../../helpers/within.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

/** `b`'s sandbox (instant once let go): a generation runs only after its `release`, or stops at a cancel. */
const held = heldSandbox();

let r: RelayCandidates;
beforeAll(async () => {
  r = await startRelayCandidates({
    upstream: (id) => (id === 'b' ? { providers: [held.provider] } : {}),
    relaying: { breaker: { failuresToOpen: 1_000, openMs: 60_000, maxOpenMs: 60_000 } },
  });
}, 60_000);
afterEach(() => {
  r.a.proxy.clearRules();
  r.b.proxy.clearRules();
});
afterAll(async () => {
  await r?.close();
});

/** Submits through the relaying gateway and waits until its generation was started at a channel. */
async function started(path: string, body: Record<string, unknown>): Promise<{ id: string; channel: string; upstreamId: string }> {
  const created = await r.call('POST', path, body);
  expect(created.status, created.text).toBe(200);
  const id = created.json.id as string;
  const upstream = await waitFor(
    async () => {
      const saved = (await r.relaying.store.tasks.get(id))?.upstream;
      return saved?.ref ? saved : undefined;
    },
    15_000,
    'the generation started',
  );
  return { id, channel: upstream.provider!, upstreamId: upstream.ref!.id };
}

/** Waits for the `n`th check (GET) of `upstreamId` at `channel`'s proxy. */
const checks = (channel: 'a' | 'b', upstreamId: string, n: number) =>
  within(r[channel].proxy.waitForRequest({ method: 'GET', path: new RegExp(`/${upstreamId}$`) }, n), 20_000, `check ${n} of ${upstreamId} at ${channel}`);

describe('checks and cancel stay with the channel that accepted', () => {
  it('accepted by the first: every check goes there while the second fails everything', async () => {
    r.b.proxy.addRule({ fault: { status: 503 } });
    const seenByB = r.b.proxy.requests.length;
    const { id, channel, upstreamId } = await started('/v1/pic/images', { model: 'pic', prompt: 'stays on a' });
    expect(channel).toBe('a');
    expect((await r.relaying.waitForTask(id)).status).toBe('completed');
    expect(r.a.about(upstreamId).filter((q) => q.method === 'GET').length).toBeGreaterThan(0);
    expect(r.b.proxy.requests.length).toBe(seenByB);
  });

  it('accepted by the second after the first refused: every check goes to the second, also once the first is healthy again', async () => {
    const refuse = r.a.proxy.addRule({ fault: { status: 503 } });
    const seenByA = r.a.proxy.requests.length;
    const heldByA = await r.a.upstreamTasks();
    const { id, channel, upstreamId } = await started('/v1/pic/images', { model: 'pic', prompt: 'stays on b' });
    expect(channel).toBe('b');
    expect(refuse.applied).toBe(1); // the create, refused
    await checks('b', upstreamId, 3);
    // `a` takes calls again: the generation is still `b`'s, so are its checks
    refuse.remove();
    await checks('b', upstreamId, 6);
    expect((await r.b.upstream.store.tasks.get(upstreamId))!.status).toBe('processing');
    held.release(upstreamId);
    const done = await r.relaying.waitForTask(id, undefined, 45_000);
    expect(done).toMatchObject({ status: 'completed', provider: 'b', attempts: 1 });
    expect((await r.b.upstream.store.tasks.get(upstreamId))!.status).toBe('completed');
    // `a` saw the one refused create of this task and nothing else
    expect(r.a.proxy.requests.slice(seenByA).map((q) => [q.method, q.idempotencyKey, q.status])).toEqual([['POST', id, 503]]);
    expect(await r.a.upstreamTasks()).toBe(heldByA);
  }, 60_000);

  it('a motion cancel goes to the upstream that accepted the create, whose task ends cancelled; the other gets nothing', async () => {
    const refuse = r.a.proxy.addRule({ fault: { status: 503 } });
    const seenByA = r.a.proxy.requests.length;
    const { id, channel, upstreamId } = await started('/v1/motion/videos', { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'stop me' }] });
    expect(channel).toBe('b');
    await checks('b', upstreamId, 2);
    expect((await r.b.upstream.store.tasks.get(upstreamId))!.status).toBe('processing');
    refuse.remove();
    const cancelled = await r.call('POST', `/v1/motion/videos/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ id, status: 'cancelled' });
    await waitFor(
      async () => ((await r.b.upstream.store.tasks.get(upstreamId))!.status === 'cancelled' ? true : undefined),
      15_000,
      'the upstream task cancelled',
    );
    const sent = r.b.about(upstreamId).filter((q) => q.method === 'POST');
    expect(sent.map((q) => q.url)).toEqual([`/power/v1/motion/videos/${upstreamId}/cancel`]);
    // `a` saw the one refused create of this task and nothing else
    expect(r.a.proxy.requests.slice(seenByA).map((q) => [q.method, q.idempotencyKey])).toEqual([['POST', id]]);
  });
});
