/**
 * Bytes written as files of their own in a temporary folder that is removed after the test file
 * (probes read files, not buffers). Test-only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A folder under the OS temp folder, removed after all tests of the file; `onDisk(bytes)` writes a new file there and answers its path. */
export function filesOnDisk(prefix: string): { dir: string; onDisk(bytes: Buffer): string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let files = 0;
  return {
    dir,
    onDisk(bytes) {
      const file = path.join(dir, `f${files++}`);
      fs.writeFileSync(file, bytes);
      return file;
    },
  };
}
