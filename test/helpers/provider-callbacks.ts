/**
 * What the provider callback tests (the `*-callbacks.test.ts` files) share: a delivery posted to a
 * gateway's callback route, a task waiting for its next check, and the GETs an upstream answered
 * about one generation. Test-only.
 */
import type { TaskRecord } from '../../src/store/types.js';
import type { Harness } from './harness.js';
import { waitFor } from './wait-for.js';

export interface CallbackAnswer {
  status: number;
  json: { received?: boolean; outcome?: string; error?: { code: string; param: string | null; message: string } };
}

/** POSTs `body` with `headers` to the callback route of `providerId` and `taskId`, as an upstream would (no bearer key). */
export async function postCallback(h: Harness, providerId: string, taskId: string, headers: Record<string, string>, body: string): Promise<CallbackAnswer> {
  const res = await h.app.inject({
    method: 'POST',
    url: `/v1/provider-callbacks/${providerId}/${taskId}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
  return { status: res.statusCode, json: res.json() };
}

/** The task once its generation is saved and no worker holds it: waiting for its next check. */
export function waitingTask(h: Harness, id: string): Promise<TaskRecord & { upstream: { ref: { id: string } } }> {
  return waitFor(
    async () => {
      const t = await h.store.tasks.get(id);
      return t?.status === 'processing' && t.upstream?.ref && t.leaseOwner === null ? (t as TaskRecord & { upstream: { ref: { id: string } } }) : undefined;
    },
    15_000,
    `task ${id} to wait for its check`,
  );
}

/** Longer than any check interval a test's gateway can draw from `pollSeconds: 3600` (+-20% jitter): only a callback brings its check sooner. */
export const NOT_BEFORE_MS = 2_880_000;
