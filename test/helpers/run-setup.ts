/**
 * Vitest's global setup: what a test run sets up once and undoes at its end, in order: its
 * temporary folder (temp-root.ts, G424), dist/ built (build-once.ts, G293) and the name of its
 * PostgreSQL databases (postgres-template.ts, G279); at the end, first, the processes it started
 * and left running are stopped (leftover-processes.ts, G475). Vitest runs a config's global setup for the run
 * and again for each project that extends the config; the first call does the work (and marks it in
 * the environment the test processes inherit), the others nothing. Test-only.
 */
import { setUpBuild } from './build-once.js';
import { stopLeftoverProcesses } from './leftover-processes.js';
import { setUpPostgresRun } from './postgres-template.js';
import { setUpTempRoot } from './temp-root.js';

const MARK = 'MEDIAGATE_TEST_RUN_SET_UP';

export default function setup(): () => Promise<void> {
  if (process.env[MARK] === '1') return async () => undefined;
  process.env[MARK] = '1';
  const temp = setUpTempRoot();
  setUpBuild();
  const dropDatabases = setUpPostgresRun();
  return async () => {
    const stopped = stopLeftoverProcesses(temp.root);
    if (stopped.length > 0)
      console.warn(
        `the run left ${stopped.length} process(es) running (a test that timed out or failed before its cleanup?); stopped:\n${stopped.map((p) => `  ${p.pid} ${p.command}`).join('\n')}`,
      );
    await dropDatabases();
    temp.remove();
    delete process.env[MARK];
  };
}
