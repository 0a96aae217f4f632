/**
 * G264: a process that runs tasks writes its heartbeat through the store; `/metrics` (of any
 * process sharing the store) counts the live workers per role, always showing the task-running
 * roles (0 when none beats, so an alert can compare with 0), beside the oldest queued task's age.
 * A graceful stop removes the worker's row at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerHeartbeat } from '../../src/tasks/worker-heartbeat.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'metrics-token-0123456789abcdef';
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** One sample of `/metrics`, or undefined when absent. */
async function sample(g: Harness, name: string): Promise<number | undefined> {
  const res = await g.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode).toBe(200);
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

const liveNow = async (g: Harness) => {
  const live = await g.store.workers.liveByRole(Date.now() - 15_000);
  return live.length > 0 ? live : undefined;
};

describe('worker liveness (G264)', () => {
  it("no worker beating: 0 per task-running role; the oldest queued task's age is there too", async () => {
    h = await createHarness({ env: { MEDIAGATE_METRICS_TOKEN: TOKEN } });
    expect(await sample(h, 'mediagate_workers_live{role="worker"}')).toBe(0);
    expect(await sample(h, 'mediagate_workers_live{role="all"}')).toBe(0);
    expect(await sample(h, 'mediagate_queue_oldest_age_seconds')).toBe(0);
  });

  it("the gateway's worker beats through the store and /metrics counts it under its role", async () => {
    h = await createHarness({ env: { MEDIAGATE_METRICS_TOKEN: TOKEN } });
    h.gateway.startBackground(); // the harness starts only the runner; this starts the heartbeat too
    expect(await waitFor(() => liveNow(h!), 5000, 'the heartbeat row')).toEqual([{ role: 'all', count: 1 }]);
    expect(await sample(h, 'mediagate_workers_live{role="all"}')).toBe(1);
    expect(await sample(h, 'mediagate_workers_live{role="worker"}')).toBe(0);
  });

  it("a stopped worker's row goes at once", async () => {
    h = await createHarness({ workers: false });
    const beat = new WorkerHeartbeat(h.store.workers, { id: 'host:42:abcd', role: 'worker' }, { warn: () => undefined, info: () => undefined });
    beat.start();
    expect(await waitFor(() => liveNow(h!), 5000, 'the heartbeat row')).toEqual([{ role: 'worker', count: 1 }]);
    await beat.stop();
    expect(await liveNow(h)).toBeUndefined();
  });
});
