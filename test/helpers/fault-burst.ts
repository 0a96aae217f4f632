/**
 * A burst of submits against gateway processes while a fault is made, and what the tests of
 * issue 23 check afterwards: what callers saw (statuses; a reset connection counts as `reset`),
 * which tasks were accepted, that those all end `completed`, read from the database itself.
 */
import type pg from 'pg';
import type { ClusterProcess } from './cluster.js';
import { waitFor } from './wait-for.js';

export interface BurstResult {
  /** Accepted task id -> the API process that accepted it. */
  accepted: Map<string, ClusterProcess>;
  /** How many calls ended so: `200`, `503`, `reset`, ... */
  outcomes: Record<string, number>;
}

/** `count` submits of a picture with a callback, `concurrency` at a time, spread over `apis`. */
export async function submitBurst(apis: ClusterProcess[], key: string, count: number, concurrency: number, callbackUrl: string): Promise<BurstResult> {
  const accepted = new Map<string, ClusterProcess>();
  const outcomes: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, s) => {
      const api = apis[s % apis.length]!;
      while (next < count) {
        const i = next++;
        let outcome: string;
        try {
          const res = await fetch(`${api.url}/v1/pic/images`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'pic', prompt: `fault burst ${i}`, size: '1:1', callback_url: callbackUrl }),
          });
          const body = (await res.json()) as { id?: string; error?: { code?: string } };
          outcome = String(res.status);
          if (res.status === 200 && body.id) accepted.set(body.id, api);
          if (res.status === 503 && (body.error?.code !== 'service_unavailable' || !res.headers.get('retry-after')))
            outcome = `503 without service_unavailable and Retry-After: ${JSON.stringify(body)}`;
        } catch (err) {
          outcome = `reset (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message})`;
        }
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 10)); // a steady stream, spread over the fault
      }
    }),
  );
  return { accepted, outcomes };
}

/** Waits until every task of `ids` is finished in the database; resolves with their rows. */
export async function finishedTasks(
  db: pg.Pool,
  ids: string[],
  timeoutMs: number,
): Promise<Map<string, { status: string; attempts: number; error: string | null }>> {
  return waitFor(
    async () => {
      const { rows } = await db.query<{ id: string; status: string; attempts: number; error: string | null }>(
        'SELECT id, status, attempts, error FROM tasks WHERE id = ANY($1)',
        [ids],
      );
      if (rows.length < ids.length || rows.some((r) => r.status === 'queued' || r.status === 'processing')) return undefined;
      return new Map(rows.map((r) => [r.id, { status: r.status, attempts: r.attempts, error: r.error }]));
    },
    timeoutMs,
    `the ${ids.length} accepted tasks to finish`,
  );
}

/** Whether each process still runs. */
export const alive = (ps: ClusterProcess[]): Record<string, boolean> =>
  Object.fromEntries(ps.map((p) => [`${p.role} ${p.pid}`, p.child.exitCode === null && p.child.signalCode === null]));
