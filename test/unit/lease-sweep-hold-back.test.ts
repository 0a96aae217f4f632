/**
 * G259: leases lapse while the database cannot be reached although their workers live; a worker's
 * lapsed-lease sweep holds back for one lease period after the store last failed, so those tasks
 * are not sent back to the queue (an attempt used) under the workers still running them.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../src/store/types.js';
import { TaskRunner } from '../../src/tasks/runner.js';
import type { RunnerOptions } from '../../src/tasks/runner-options.js';

function runnerWith(storeFaultAt: () => number): { runner: TaskRunner; sweeps: () => number } {
  let sweeps = 0;
  const store = {
    listLapsedLeases: async () => {
      sweeps++;
      return [];
    },
    claimNext: async () => undefined,
    nextRunAfter: async () => undefined,
  } as unknown as TaskStore;
  const runner = new TaskRunner({
    store,
    providers: { mediaIds: () => [], get: () => undefined },
    channels: {},
    results: {},
    log: pino({ level: 'silent' }),
    tmpDir: '/nonexistent',
    concurrency: 1,
    maxAttempts: 3,
    leaseMs: 60_000,
    videosResultTtlHours: 1,
    fetchMedia: async () => Buffer.alloc(0),
    mediaUrl: () => '',
    storeFaultAt,
  } as unknown as RunnerOptions);
  return { runner, sweeps: () => sweeps };
}

describe('the lapsed-lease sweep after a database fault (G259)', () => {
  it('runs when the store has not failed within a lease period', async () => {
    const { runner, sweeps } = runnerWith(() => Date.now() - 61_000);
    runner.start();
    await new Promise((r) => setTimeout(r, 20));
    await runner.stop(0);
    expect(sweeps()).toBe(1);
  });

  it("holds back within a lease period of the store's last failure", async () => {
    const { runner, sweeps } = runnerWith(() => Date.now() - 1000);
    runner.start();
    await new Promise((r) => setTimeout(r, 20));
    await runner.stop(0);
    expect(sweeps()).toBe(0);
  });
});
