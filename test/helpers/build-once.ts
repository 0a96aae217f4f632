/**
 * Part of the run's global setup (run-setup.ts, G293): builds dist/ (and the client package's)
 * once before any test file runs, with the launcher's own staleness check, so the process tests find it built instead of
 * each starting a compiler of its own. `npm run test:fast` sets MEDIAGATE_TEST_NO_BUILD=1: its
 * folders start no process. Test-only.
 */
import { spawnSync } from 'node:child_process';
import { BIN, ROOT } from './process.js';

export function setUpBuild(): void {
  if (process.env.MEDIAGATE_TEST_NO_BUILD === '1') return;
  const r = spawnSync(process.execPath, [BIN, 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`building dist/ failed: ${r.stderr}`);
  process.env.MEDIAGATE_TEST_DIST_BUILT = '1'; // the test processes, started after this, inherit it
}
