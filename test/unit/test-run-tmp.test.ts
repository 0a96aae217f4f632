/**
 * G424: a test process's temporary folder is its run's own (test/helpers/temp-root.ts), which the
 * run removes at its end; the harness's data directories land in it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-root.js';

describe("the run's temporary folder (G424)", () => {
  it('is where os.tmpdir() points, passable but not listable by others, and holds the harness folders', () => {
    const root = os.tmpdir();
    expect(path.basename(root)).toMatch(/^mediagate-test-run-/);
    expect(fs.statSync(root).mode & 0o777).toBe(0o711);
    const dir = tempDir();
    expect(path.dirname(dir)).toBe(root);
    fs.rmSync(dir, { recursive: true });
  });
});
