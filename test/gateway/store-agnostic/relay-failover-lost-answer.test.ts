/**
 * A create whose answer was lost (G86, G124), gateway to gateway: a relaying mediagate
 * routes every model to relay channel `a`, then `b`. When `a`'s connection breaks after the create
 * was sent, the create is sent to `a` once more under the same Idempotency-Key and body before any
 * other channel is tried: an upstream that took it answers the same generation (one generation,
 * not one at `a` running unchecked and billed, and another at `b`); one that never got it gets it
 * then; one that breaks again is left for the next candidate.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

let r: RelayCandidates;
beforeAll(async () => {
  r = await startRelayCandidates({ relaying: { breaker: { failuresToOpen: 1_000, openMs: 60_000, maxOpenMs: 60_000 } } });
}, 60_000);
afterEach(() => {
  r.a.proxy.clearRules();
});
afterAll(async () => {
  await r?.close();
});

async function pic(prompt: string) {
  const created = await r.call('POST', '/v1/pic/images', { model: 'pic', prompt });
  expect(created.status).toBe(200);
  const task = await r.relaying.waitForTask(created.json.id as string);
  expect(task.status, task.error ?? '').toBe('completed');
  return task;
}
const createsAt = (channel: 'a' | 'b', id: string) => r[channel].creates().filter((c) => c.idempotencyKey === id);

describe('the connection breaks after a create was sent', () => {
  it('the upstream took it: the create sent again gets the same generation there; no other channel is asked', async () => {
    const heldByA = await r.a.upstreamTasks();
    r.a.proxy.addRule({ match: { method: 'POST' }, times: 1, fault: { forwardThen: 'reset' } });
    const task = await pic('the answer was lost');
    expect(task).toMatchObject({ provider: 'a', attempts: 1, upstream: { provider: 'a', generation: 0 } });
    const creates = createsAt('a', task.id);
    expect(creates.map((c) => [c.action, c.targetStatus])).toEqual([
      ['forward-then-reset', 200],
      ['forwarded', 200],
    ]);
    expect(creates[1]!.body).toBe(creates[0]!.body);
    expect(await r.a.upstreamTasks()).toBe(heldByA + 1); // one generation at `a`, answered twice
    expect(createsAt('b', task.id)).toEqual([]);
  });

  it('the upstream never got it: the create sent again makes it there', async () => {
    const heldByA = await r.a.upstreamTasks();
    r.a.proxy.addRule({ match: { method: 'POST' }, times: 1, fault: 'reset' });
    const task = await pic('reset before it arrived');
    expect(task.provider).toBe('a');
    expect(createsAt('a', task.id).map((c) => c.action)).toEqual(['reset', 'forwarded']);
    expect(await r.a.upstreamTasks()).toBe(heldByA + 1);
    expect(createsAt('b', task.id)).toEqual([]);
  });

  it('it breaks again: the next candidate takes the task', async () => {
    const heldByA = await r.a.upstreamTasks();
    r.a.proxy.addRule({ match: { method: 'POST' }, fault: 'reset' });
    const task = await pic('a keeps breaking');
    expect(task).toMatchObject({ provider: 'b', attempts: 1 });
    expect(createsAt('a', task.id).map((c) => c.action)).toEqual(['reset', 'reset']);
    expect(createsAt('b', task.id)).toHaveLength(1);
    expect(await r.a.upstreamTasks()).toBe(heldByA);
  });

  it('a refused connection is not sent again: the next candidate takes the task at once', async () => {
    await r.a.proxy.setDown(true);
    try {
      const task = await pic('a is down');
      expect(task.provider).toBe('b');
      expect(createsAt('a', task.id)).toEqual([]);
    } finally {
      await r.a.proxy.setDown(false);
    }
  });
});
