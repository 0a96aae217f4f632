/**
 * Creates the upstream acted on (issue 13, G86, G89, G95, G99): a relaying mediagate in
 * front of an upstream mediagate through the fault proxy. The upstream accepted the create, but its
 * answer was lost (the connection reset) or came too late (the relay's timeout fired first): the
 * create is sent again with the same Idempotency-Key and is the same upstream task, exactly one, for
 * pic, motion, videos and Model Center. A create the upstream refuses fails the task at once with
 * the upstream's reason and field, its address and key taken out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayPair } from '../../helpers/relay-pair.js';
import {
  createActions,
  createFault,
  createsOf,
  escaped,
  settleAll,
  startFaultPair,
  submit,
  upstreamIdIn,
  upstreamTaskCount,
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

const ALL: FamilyName[] = ['pic', 'motion', 'videos', 'model-center'];

describe('a create the upstream accepted, its answer not heard', () => {
  it.each([
    ['reset', 'lost', 'proxy'],
    ['hang', "too late (the relay's timeout fired)", 'client'],
  ] as const)('then %s: the answer %s; the retry with the same Idempotency-Key is the same upstream task', async (then, _what, closedBy) => {
    for (const c of await createFault(pair, `accepted-then-${then}`, { forwardThen: then }, ALL)) {
      const creates = createsOf(pair, c.id);
      expect(createActions(pair, c.id), c.family).toEqual([
        [`forward-then-${then}`, closedBy],
        ['forwarded', 200],
      ]);
      expect(creates.map((r) => r.idempotencyKey)).toEqual([c.id, c.id]);
      // the upstream acted on both; the second was its first answer replayed, the one task it made
      expect(creates.map((r) => r.targetStatus)).toEqual([200, 200]);
      expect(creates[1]!.targetHeaders?.['idempotent-replayed'], c.family).toBe('true');
      expect(upstreamIdIn(creates[1]!)).toBe(upstreamIdIn(creates[0]!));
    }
  });
});

describe('a create the upstream refuses', () => {
  it("fails the task at once with the upstream's reason and field; its address and key are not in it", async () => {
    const before = await upstreamTaskCount(pair);
    const ids = await Promise.all(
      (['pic', 'videos', 'model-center'] as const).map(async (family) => {
        const marker = `create refused for ${family}.`;
        // the upstream's message names where it is and the key the relay sent
        const message = `prompt: refused at ${pair.proxy.url}/v1/tasks (host 127.0.0.1:${pair.proxy.port}, key ${pair.upstream.key})`;
        pair.proxy.addRule({
          match: { method: 'POST', body: escaped(marker) },
          times: 1,
          fault: { status: 400, body: { error: { message, type: 'invalid_request_error', param: 'prompt', code: 'invalid_request' } } },
        });
        return submit(pair, family, marker);
      }),
    );
    for (const task of await settleAll(pair, ids, before)) {
      expect(task.status, task.family).toBe('failed');
      expect(task.attempts, task.family).toBe(1);
      expect(task.error, task.family).toMatch(/^prompt: refused at \[upstream\]\/v1\/tasks \(host \[upstream\], key /);
      expect(createActions(pair, task.id)).toEqual([['status', 400]]);
    }
  });
});
