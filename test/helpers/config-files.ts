/** Configuration files written for a test, and the ConfigError a bad one must give. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { ConfigError } from '../../src/config-error.js';

/** A folder for this test file's configuration files, removed after its tests. */
export function configFiles(prefix = 'mediagate-config-'): { dir: string; file(content: unknown): string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  return {
    dir,
    /** Writes `content` (JSON unless a string) to a new file; returns its path. */
    file(content: unknown): string {
      const p = path.join(dir, `c${n++}.json`);
      fs.writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
      return p;
    },
  };
}

/** The ConfigError `fn` throws (the test fails if it throws nothing or something else). */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}
