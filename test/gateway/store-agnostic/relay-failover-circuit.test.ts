/**
 * Circuits of relay channels (G91), gateway to gateway: a relaying mediagate routes
 * every model to relay channel `a`, then `b`, each an upstream mediagate behind a fault proxy.
 * After `failuresToOpen` channel faults in a row `a`'s circuit opens: creates go straight to `b`
 * and `a`'s proxy sees nothing. Only the end of the open period lets one probe through: a failed
 * probe opens it again for twice as long, a successful one closes it and `a` takes new tasks again.
 * The circuits' clock is stepped by the test (nothing here depends on how fast the machine is);
 * the tests run in order, each from the state the one before left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/store/types.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

const OPEN_MS = 1_000;
let now = 1_000_000;
let r: RelayCandidates;
beforeAll(async () => {
  r = await startRelayCandidates({
    relaying: { breaker: { failuresToOpen: 3, openMs: OPEN_MS, maxOpenMs: 4 * OPEN_MS }, channelClock: () => now },
  });
}, 60_000);
afterAll(async () => {
  await r?.close();
});

const circuitOfA = () => r.relaying.gateway.channels.state('a');

/** One pic task through the relaying gateway, completed (on whichever channel took it). */
async function pic(prompt: string): Promise<TaskRecord> {
  const created = await r.call('POST', '/v1/pic/images', { model: 'pic', prompt });
  expect(created.status, created.text).toBe(200);
  const task = await r.relaying.waitForTask(created.json.id as string);
  expect(task.status, task.error ?? '').toBe('completed');
  return task;
}

/** Requests `a`'s proxy received from `from` on: method and Idempotency-Key (checks and downloads have none). */
const seenByA = (from: number) => r.a.proxy.requests.slice(from).map((q) => [q.method, q.idempotencyKey ?? null]);

describe('the circuit of a failing channel', () => {
  it('opens after consecutive faults only (a success in between starts the count again); then creates skip the channel', async () => {
    const refuse = () => r.a.proxy.addRule({ fault: { status: 503 } });
    let fault = refuse();
    const first = [await pic('f1'), await pic('f2')];
    expect(first.map((t) => t.provider)).toEqual(['b', 'b']);
    expect(circuitOfA()).toBe('closed');
    // one answer from `a` in between: the faults before it no longer count
    fault.remove();
    expect((await pic('ok')).provider).toBe('a');
    fault = refuse();
    let mark = r.a.proxy.requests.length;
    const faults: string[] = [];
    for (const prompt of ['f3', 'f4', 'f5']) {
      const task = await pic(prompt);
      expect(task.provider).toBe('b');
      faults.push(task.id);
      expect(circuitOfA()).toBe(faults.length < 3 ? 'closed' : 'open');
    }
    // three creates offered to `a`, each refused, in the order the tasks came
    expect(seenByA(mark)).toEqual(faults.map((id) => ['POST', id]));
    // open: later creates go straight to `b`, `a` is not touched
    mark = r.a.proxy.requests.length;
    const skipped = await Promise.all(['s1', 's2', 's3'].map(pic));
    expect(skipped.map((t) => t.provider)).toEqual(['b', 'b', 'b']);
    expect(skipped.map((t) => t.attempts)).toEqual([1, 1, 1]);
    expect(seenByA(mark)).toEqual([]);
    // `a` healthy again does not matter while the open period lasts
    fault.remove();
    expect((await pic('still open')).provider).toBe('b');
    expect(seenByA(mark)).toEqual([]);
    expect(circuitOfA()).toBe('open');
  });

  it('after the open period one probe goes through: a failed one opens the circuit for twice as long, a successful one closes it', async () => {
    const fault = r.a.proxy.addRule({ fault: { status: 503 } });
    let mark = r.a.proxy.requests.length;
    now += OPEN_MS;
    const probe = await pic('probe 1');
    expect(probe.provider).toBe('b');
    expect(seenByA(mark)).toEqual([['POST', probe.id]]); // the probe, refused
    expect(circuitOfA()).toBe('open');
    // open again for twice as long: one period later it still refuses calls
    mark = r.a.proxy.requests.length;
    now += OPEN_MS;
    expect((await pic('not yet')).provider).toBe('b');
    expect(seenByA(mark)).toEqual([]);
    // `a` recovers; at the end of the doubled period the probe reaches it and closes the circuit
    fault.remove();
    now += OPEN_MS;
    const closing = await pic('probe 2');
    expect(closing.provider).toBe('a');
    expect(seenByA(mark)[0]).toEqual(['POST', closing.id]);
    expect(circuitOfA()).toBe('closed');
    // closed: new tasks go to `a`, the first candidate, again
    const after = await Promise.all(['c1', 'c2'].map(pic));
    expect(after.map((t) => t.provider)).toEqual(['a', 'a']);
    expect(r.b.creates().filter((c) => after.some((t) => t.id === c.idempotencyKey))).toEqual([]);
  });
});
