/**
 * Refusals by every candidate count in a row (G91, G123), gateway to gateway: a task
 * that waited through a long outage (its refusals one short of failing it) is then accepted by a
 * channel; when that generation fails and every candidate refuses the next one, the task waits
 * again from a count of one: the outage before the accepted create is not held against it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SERVER_FAULTS } from '../../../src/tasks/backoff.js';
import type { FaultRule } from '../../helpers/fault-proxy.js';
import { waitFor } from '../../helpers/wait-for.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

let r: RelayCandidates;
beforeAll(async () => {
  // circuits that never open here: every refusal comes from the channels themselves
  r = await startRelayCandidates({ relaying: { breaker: { failuresToOpen: 1_000, openMs: 60_000, maxOpenMs: 60_000 } } });
}, 60_000);
afterAll(async () => {
  await r?.close();
});

describe('refusals by every candidate', () => {
  it('an accepted create ends the run of refusals: a later outage starts counting again', async () => {
    await r.a.proxy.setDown(true);
    await r.b.proxy.setDown(true);
    const created = await r.call('POST', '/v1/pic/images', { model: 'pic', prompt: 'outages' });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    // a long outage: as many refusals in a row as a task may have before one more fails it, set
    // while the task waits in the queue after its first refusal (it is tried again soon: until set)
    const outage = await waitFor(
      async () => {
        const t = (await r.relaying.store.tasks.get(id))!;
        if (t.serverFaults < 1 || t.status !== 'queued') return undefined;
        return r.relaying.store.tasks.updateIf(id, { statusIn: ['queued'] }, { serverFaults: MAX_SERVER_FAULTS });
      },
      15_000,
      'the task back in the queue after its first refusal by every candidate',
    );
    expect(outage).toMatchObject({ status: 'queued', serverFaults: MAX_SERVER_FAULTS, attempts: 0 });

    // `b` comes back and accepts; its generation then fails, and from that moment `b` refuses creates
    let refuseCreates: FaultRule | undefined;
    r.b.proxy.addRule({
      match: { method: 'GET', path: /^\/v1\/result\// },
      times: 1,
      fault: {
        rewriteJson: (json) => {
          refuseCreates = r.b.proxy.addRule({ match: { method: 'POST' }, fault: { status: 503 } });
          return { ...(json as Record<string, unknown>), status: 'failed', image_url: null, error: 'the upstream lost its GPU' };
        },
      },
    });
    await r.b.proxy.setDown(false);
    const waiting = await waitFor(
      async () => {
        // refused by `b` (and `a`, down): once that is handled the task is no longer processing
        const t = (await r.relaying.store.tasks.get(id))!;
        return refuseCreates?.applied === 1 && t.status !== 'processing' ? t : undefined;
      },
      20_000,
      'the second generation refused by every candidate',
    );
    expect(waiting, waiting.error ?? '').toMatchObject({ status: 'queued', serverFaults: 1, attempts: 1, error: null, upstream: { generation: 1 } });

    // `b` takes creates again: the new generation completes there
    refuseCreates!.remove();
    const done = await r.relaying.waitForTask(id, undefined, 20_000);
    expect(done, done.error ?? '').toMatchObject({ status: 'completed', provider: 'b', attempts: 2, upstream: { generation: 1 } });
    expect(r.b.creates().map((c) => [c.idempotencyKey, c.status])).toEqual([
      [id, 200],
      [`${id}.1`, 503],
      [`${id}.1`, 200],
    ]);
  }, 60_000);
});
