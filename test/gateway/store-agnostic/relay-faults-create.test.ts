/**
 * Faults at create that never reach the upstream (issue 13, G89-G91, G97, G121): a
 * relaying mediagate in front of an upstream mediagate through the fault proxy. A task each of pic,
 * Model Center and a video family (motion or videos; run together) meets the fault at its first
 * create: an upstream 500, 429 or 503 with Retry-After, a reset connection, a hung call, malformed
 * JSON. Each but the last is the channel's fault: the task goes back to the queue without using an
 * attempt (malformed JSON is a reply problem of the task's own, G272: an attempt of the same
 * generation), is
 * created on the next try (not before the upstream's Retry-After) and completes; every generation
 * is one upstream task; nothing the caller sees names the upstream. Creates the upstream acted on:
 * relay-faults-create-answered.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Fault } from '../../helpers/fault-proxy.js';
import { waitFor } from '../../helpers/wait-for.js';
import type { RelayPair } from '../../helpers/relay-pair.js';
import {
  createActions as createActionsIn,
  createFault as createFaultIn,
  createsOf,
  escaped,
  startFaultPair,
  type FamilyName,
} from '../../helpers/relay-faults.js';

let pair: RelayPair;
beforeAll(async () => {
  pair = await startFaultPair();
}, 60_000);
afterAll(async () => {
  await pair?.close();
});
// a test that failed leaves no rule behind for the next
afterEach(() => pair?.proxy.clearRules());

const WITH_MOTION: FamilyName[] = ['pic', 'motion', 'model-center'];
const WITH_VIDEOS: FamilyName[] = ['pic', 'videos', 'model-center'];

const createFault = (name: string, fault: Fault, families: FamilyName[], attempts = 1) => createFaultIn(pair, name, fault, families, attempts);
const createActions = (id: string) => createActionsIn(pair, id);

describe('faults at create, the next create goes through', () => {
  it('an upstream 500', async () => {
    for (const c of await createFault('500', { status: 500 }, WITH_MOTION)) {
      expect(createActions(c.id), c.family).toEqual([
        ['status', 500],
        ['forwarded', 200],
      ]);
    }
  });

  it.each([429, 503])('%i with Retry-After: the task is not tried again before the upstream asked', async (status) => {
    const RETRY_AFTER_S = 1; // longer than the 200 ms a task waits here after its first channel fault anyway (RELAYING_BACKOFF_SCALE)
    const done = createFault(`${status}+retry-after`, { status, retryAfter: RETRY_AFTER_S }, status === 429 ? WITH_VIDEOS : WITH_MOTION);
    // read the relaying gateway's store while the task waits: its run_after honours Retry-After
    const waited = await Promise.all(
      (status === 429 ? WITH_VIDEOS : WITH_MOTION).map(async (family) => {
        const refused = await pair.proxy.waitForRequest({ method: 'POST', body: escaped(`create fault ${status}+retry-after for ${family}.`) });
        const id = refused.idempotencyKey!;
        const queued = await waitFor(
          async () => {
            const t = await pair.relaying.store.tasks.get(id);
            return t?.status === 'queued' && t.serverFaults === 1 ? t : undefined;
          },
          10_000,
          `${family}: the task back in the queue`,
        );
        expect(queued.runAfter, family).toBeGreaterThanOrEqual(refused.at + RETRY_AFTER_S * 1000);
        return { id, refused };
      }),
    );
    await done;
    for (const { id, refused } of waited) {
      const [first, second] = createsOf(pair, id);
      expect([first!.status, second!.status]).toEqual([status, 200]);
      expect(second!.at).toBeGreaterThanOrEqual(refused.at + RETRY_AFTER_S * 1000);
    }
  });

  it('a connection reset before any answer', async () => {
    for (const c of await createFault('reset', 'reset', WITH_MOTION)) {
      expect(createActions(c.id), c.family).toEqual([
        ['reset', 'proxy'],
        ['forwarded', 200],
      ]);
    }
  });

  it("a hung call: the relay's own timeout gives up on it", async () => {
    for (const c of await createFault('hang', 'hang', WITH_VIDEOS)) {
      // closed by the client: the relay's timeout fired (the proxy never lets a hung call go)
      expect(createActions(c.id), c.family).toEqual([
        ['hang', 'client'],
        ['forwarded', 200],
      ]);
    }
  });

  it('malformed JSON: a reply problem of the task, a failed attempt of the same generation (G272)', async () => {
    for (const c of await createFault('malformed', 'malformed', WITH_MOTION, 2)) {
      expect(createActions(c.id), c.family).toEqual([
        ['malformed', 200],
        ['forwarded', 200],
      ]);
    }
  });
});
