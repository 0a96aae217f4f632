/**
 * Faults at status queries (issue 13, G87, G97): a relaying mediagate in front of an
 * upstream mediagate through the fault proxy. A task each of pic or videos, motion and Model Center
 * (their queries go to different paths, so they run together) meets the fault at its first checks:
 * an upstream 500, 429 or 503 with Retry-After, a reset connection, a hung call, malformed JSON,
 * an answer lost. A check that could not be made is looked at again later, without costing an attempt or a
 * new generation: every task completes with its one upstream task; nothing a caller sees names
 * the upstream.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/store/types.js';
import type { Fault, SeenRequest } from '../../helpers/fault-proxy.js';
import { waitFor } from '../../helpers/wait-for.js';
import type { RelayPair } from '../../helpers/relay-pair.js';
import { expectCompleted, FAMILIES, settleAll, startFaultPair, submit, upstreamIdIn, upstreamTaskCount, type FamilyName } from '../../helpers/relay-faults.js';

let pair: RelayPair;
beforeAll(async () => {
  pair = await startFaultPair();
}, 60_000);
afterAll(async () => {
  await pair?.close();
});
// a test that failed leaves no rule behind for the next
afterEach(() => pair?.proxy.clearRules());

const WITH_PIC: FamilyName[] = ['pic', 'motion', 'model-center'];
const WITH_VIDEOS: FamilyName[] = ['videos', 'motion', 'model-center'];

/** The status queries the proxy saw for a task's generation, in order. */
function checksOf(task: TaskRecord): SeenRequest[] {
  const upstreamId = task.upstream!.ref!.id;
  return pair.proxy.requests.filter((r) => r.method === 'GET' && FAMILIES[task.family as FamilyName].query.test(r.url) && r.url.endsWith(`/${upstreamId}`));
}

/** One task per family whose first `times` status queries meet `fault`; answers the tasks once all completed. */
async function checkFault(fault: Fault, families: FamilyName[], times: number, name: string): Promise<TaskRecord[]> {
  const before = await upstreamTaskCount(pair);
  // one task per query path: a rule on the path meets only that task's checks
  const rules = families.map((family) => pair.proxy.addRule({ match: { method: 'GET', path: FAMILIES[family].query }, times, fault }));
  const ids = await Promise.all(families.map((family) => submit(pair, family, `check fault ${name}`)));
  const tasks = await settleAll(pair, ids, before);
  expectCompleted(pair, tasks);
  for (const [i, task] of tasks.entries()) {
    expect(rules[i]!.applied, task.family).toBe(times);
    // a check that could not be made costs nothing: one attempt, one generation, no trip back to the queue
    expect([task.attempts, task.upstream!.generation, task.serverFaults], task.family).toEqual([1, 0, 0]);
  }
  return tasks;
}

/** What the proxy did to each status query of a task, and what the client got. */
const checkActions = (task: TaskRecord) => checksOf(task).map((r) => [r.action, r.status ?? r.closedBy]);

describe('faults at status queries, a later check goes through', () => {
  it('an upstream 500, twice', async () => {
    for (const task of await checkFault({ status: 500 }, WITH_PIC, 2, '500')) {
      expect(checkActions(task).slice(0, 3), task.family).toEqual([
        ['status', 500],
        ['status', 500],
        ['forwarded', 200],
      ]);
    }
  });

  it.each([429, 503])('%i with Retry-After: the next check is not due, nor made, before the upstream asked', async (status) => {
    const RETRY_AFTER_S = 1; // a failed check is otherwise looked at again within ~100 ms here
    const from = pair.proxy.requests.length;
    const families = status === 429 ? WITH_VIDEOS : WITH_PIC;
    const done = checkFault({ status, retryAfter: RETRY_AFTER_S }, families, 1, `${status}`);
    const waited = await Promise.all(
      families.map(async (family) => {
        const refused = await waitFor(
          () => pair.proxy.requests.slice(from).find((r) => r.status === status && FAMILIES[family].query.test(r.url)),
          20_000,
          `${family}: the ${status}`,
        );
        // the relaying gateway's store while the task waits for its next check
        const id = relayingIdOf(refused);
        const waiting = await waitFor(
          async () => {
            const t = await pair.relaying.store.tasks.get(id);
            return t?.upstream?.checkFailures === 1 ? t : undefined;
          },
          10_000,
          `${family}: the check scheduled again`,
        );
        expect(waiting.status).toBe('processing');
        expect(waiting.runAfter, family).toBeGreaterThanOrEqual(refused.at + RETRY_AFTER_S * 1000);
        return refused;
      }),
    );
    const results = await done;
    for (const [i, task] of results.entries()) {
      const checks = checksOf(task);
      const at = checks.indexOf(waited[i]!);
      expect(at, task.family).toBeGreaterThanOrEqual(0);
      expect(checks[at + 1]!.at, task.family).toBeGreaterThanOrEqual(waited[i]!.at + RETRY_AFTER_S * 1000);
    }
  });

  it('a connection reset before any answer', async () => {
    for (const task of await checkFault('reset', WITH_PIC, 1, 'reset')) {
      expect(checkActions(task).slice(0, 2), task.family).toEqual([
        ['reset', 'proxy'],
        ['forwarded', 200],
      ]);
    }
  });

  it("a hung call: the relay's own timeout gives up on it", async () => {
    for (const task of await checkFault('hang', WITH_VIDEOS, 1, 'hang')) {
      expect(checkActions(task).slice(0, 2), task.family).toEqual([
        ['hang', 'client'],
        ['forwarded', 200],
      ]);
    }
  });

  it('malformed JSON', async () => {
    for (const task of await checkFault('malformed', WITH_PIC, 1, 'malformed')) {
      expect(checkActions(task).slice(0, 2), task.family).toEqual([
        ['malformed', 200],
        ['forwarded', 200],
      ]);
    }
  });

  it('the answer lost after the upstream answered (checks change nothing there)', async () => {
    for (const task of await checkFault({ forwardThen: 'reset' }, WITH_VIDEOS, 1, 'lost')) {
      expect(checkActions(task).slice(0, 2), task.family).toEqual([
        ['forward-then-reset', 'proxy'],
        ['forwarded', 200],
      ]);
    }
  });
});

/** The relaying task a status query was made for: the Idempotency-Key of the create the upstream answered with its id. */
function relayingIdOf(query: SeenRequest): string {
  const upstreamId = query.url.split('/').at(-1);
  const create = pair.proxy.requests.find((r) => r.method === 'POST' && upstreamIdIn(r) === upstreamId);
  expect(create?.idempotencyKey).toBeDefined();
  return create!.idempotencyKey!;
}
