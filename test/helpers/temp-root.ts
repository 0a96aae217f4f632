/**
 * Part of the run's global setup (run-setup.ts, G424): one temporary folder per test run, removed
 * when the run ends. It is set as TMPDIR before the test processes start, so they inherit it: every `tempDir()`,
 * `fs.mkdtempSync(os.tmpdir() ...)` and spawned gateway's scratch space lands under it, and a run
 * leaves nothing behind in the machine's /tmp (a whole `npm test` made ~150 data directories with
 * their results). `MEDIAGATE_TEST_KEEP_TMP=1` keeps it and prints where it is. Test-only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Makes the run's temporary root and sets TMPDIR to it; answers it and how to remove it. */
export function setUpTempRoot(): { root: string; remove(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-test-run-'));
  // others may pass through, not list: the private PostgreSQL servers' folders below belong to the postgres user
  fs.chmodSync(root, 0o711);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  const remove = (): void => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.MEDIAGATE_TEST_KEEP_TMP === '1') console.log(`the test run's temporary files are in ${root}`);
    else fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
  return { root, remove };
}

/** A new folder under the run's temporary root (the machine's temp folder outside a run). */
export function tempDir(prefix = 'mediagate-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
