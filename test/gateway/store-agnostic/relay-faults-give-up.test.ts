/**
 * An upstream whose status queries never answer (issue 13, G87): always a 500, or
 * always hung past the relay's timeout. A task never waits forever for a check that cannot be made:
 * its generation is given up after the attempt time limit (and stopped at the upstream where the
 * family can be cancelled), a new one is started while attempts remain, then the task fails saying
 * so. pic, motion and Model Center through a relaying mediagate and the fault proxy; every
 * generation is one upstream task; nothing a caller sees names the upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fault } from '../../helpers/fault-proxy.js';
import type { RelayPair } from '../../helpers/relay-pair.js';
import { ANY_QUERY, settleAll, startFaultPair, submit, upstreamTaskCount, upstreamTasksOf, type FamilyName } from '../../helpers/relay-faults.js';

const ATTEMPT_TIMEOUT_S = 3;
let pair: RelayPair;
beforeAll(async () => {
  pair = await startFaultPair({ relaying: { env: { MEDIAGATE_MAX_ATTEMPTS: '2', MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS: String(ATTEMPT_TIMEOUT_S) } } });
}, 60_000);
afterAll(async () => {
  await pair?.close();
});

const FAMILIES: FamilyName[] = ['pic', 'motion', 'model-center'];

async function neverAnswered(fault: Fault, text: string): Promise<void> {
  const rule = pair.proxy.addRule({ match: { method: 'GET', path: ANY_QUERY }, fault });
  try {
    const before = await upstreamTaskCount(pair);
    const ids = await Promise.all(FAMILIES.map((family) => submit(pair, family, text)));
    for (const task of await settleAll(pair, ids, before)) {
      expect(task.status, task.family).toBe('failed');
      // not just "did not finish": the upstream may well have finished it (the pic and Model Center ones did); it could not be asked
      expect(task.error, task.family).toMatch(
        new RegExp(`^generation did not finish within ${ATTEMPT_TIMEOUT_S} s \\(attempt 2 of 2\\); the last \\d+ checks of its status at the upstream failed$`),
      );
      expect([task.attempts, task.upstream!.generation], task.family).toEqual([2, 1]);
      const upstreamIds = upstreamTasksOf(pair, task.id);
      if (task.family !== 'motion') {
        expect(
          (await Promise.all(upstreamIds.map((u) => pair.upstream.store.tasks.get(u)))).map((t) => t!.status),
          task.family,
        ).toEqual(['completed', 'completed']);
      }
      // a motion generation given up on is cancelled at the upstream; the others cannot be
      const cancels = pair.proxy.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/cancel'));
      const cancelled = upstreamIds.filter((u) => cancels.some((c) => c.url === `/power/v1/motion/videos/${u}/cancel`));
      expect(cancelled, task.family).toEqual(task.family === 'motion' ? upstreamIds : []);
    }
    expect(rule.applied).toBeGreaterThan(0);
  } finally {
    rule.remove();
  }
}

describe('status queries that are never answered', () => {
  it('always a 500: each generation given up after the attempt time limit, then the task fails', async () => {
    await neverAnswered({ status: 500 }, 'queries always fail');
  });

  it("always hung past the relay's timeout: the same", async () => {
    await neverAnswered('hang', 'queries always hang');
  });
});
