/**
 * Vitest global setup (G424): one temporary folder per test run, removed when the run ends. It is
 * set as TMPDIR before the test processes start, so they inherit it: every `tempDir()`,
 * `fs.mkdtempSync(os.tmpdir() ...)` and spawned gateway's scratch space lands under it, and a run
 * leaves nothing behind in the machine's /tmp (a whole `npm test` made ~150 data directories with
 * their results). `MEDIAGATE_TEST_KEEP_TMP=1` keeps it and prints where it is. Test-only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  // vitest runs a global setup once for the run and once per project that extends the config: one folder is enough
  if (process.env.MEDIAGATE_TEST_TMP_ROOT !== undefined) return () => {};
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-test-run-'));
  // others may pass through, not list: the private PostgreSQL servers' folders below belong to the postgres user
  fs.chmodSync(root, 0o711);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  process.env.MEDIAGATE_TEST_TMP_ROOT = root;
  return () => {
    delete process.env.MEDIAGATE_TEST_TMP_ROOT;
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.MEDIAGATE_TEST_KEEP_TMP === '1') console.log(`the test run's temporary files are in ${root}`);
    else fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
