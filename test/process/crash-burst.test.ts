import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/process.js';

// scripts/crash-burst.js at a size that fits CI: a burst across every family, kill -9 mid-burst,
// restart on the same data; every task answered 200 completes, none is lost, stuck or run twice,
// and the credits reconcile with every hold settled (issue 16).
describe('crash safety under load', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('every accepted task of a burst completes across kill -9 and a restart', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'crash-burst.js'), '--tasks', '120', '--concurrency', '30'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(summary, r.stderr).toMatchObject({ ok: true, stuck: 0, completedTwice: 0, credits: { reconciled: true, openHolds: 0 } });
    expect(summary.acceptedBeforeKill as number).toBeGreaterThan(0);
    expect((summary.finals as { completed: number }).completed).toBe(summary.accepted);
    expect(r.status).toBe(0);
  }, 250_000);
});
