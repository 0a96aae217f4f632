import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/process.js';

// scripts/crash-burst.js --relay (issue 13) at 200 tasks: a relaying gateway (providers.json: every
// model to an upstream mediagate) is killed with SIGKILL mid-burst, while creates the upstream
// already took are still on their way back and generations are being checked, then restarted on
// the same data. Every accepted task completes once, and each maps to exactly one upstream task.
describe('crash safety of a relaying gateway under load', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('kill -9 mid-burst of 200 relayed tasks: each completes once, from exactly one upstream create', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'crash-burst.js'), '--relay', '--tasks', '200', '--concurrency', '30'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 170_000,
    });
    const summary = JSON.parse(r.stdout.trim().split('\n').pop() || '{}') as Record<string, any>;
    expect(summary, r.stderr).toMatchObject({ ok: true, mode: 'relay', stuck: 0, completedTwice: 0, upstreamCompletedTwice: 0, violations: {} });
    // the kill cut the burst: tasks answered before and after it, creates and checks in flight
    expect(summary.accepted).toBe(200);
    expect(summary.acceptedBeforeKill).toBeGreaterThan(0);
    expect(summary.acceptedBeforeKill).toBeLessThan(summary.accepted);
    expect(summary.checkingAtKill).toBeGreaterThan(0);
    expect(summary.queuedAtKill).toBeGreaterThan(0);
    // creates the upstream took whose answers the killed gateway never saved (among them one that
    // relays an upload as a signed URL): repeated after the restart under the same Idempotency-Key
    // and body, and answered with the same upstream task
    expect(summary.createsCutByKill).toBeGreaterThan(0);
    expect(summary.uploadCreatesCutByKill).toBeGreaterThan(0);
    expect(summary.finals).toEqual({ completed: 200 });
    // every task the relaying gateway stored (also any whose answer the kill cut) has one upstream task
    expect(summary.upstreamTasks).toBe(summary.relayingTasks);
    expect(r.status).toBe(0);
  }, 180_000);
});
