import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../src/errors.js';
import { ROOT } from './helpers/process.js';

const doc = fs.readFileSync(path.join(ROOT, 'docs', 'API.md'), 'utf8');

describe('every error code is documented in docs/API.md', () => {
  it.each(Object.entries(ERROR_CATALOG))('%s', (code, entry) => {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    expect(row, `docs/API.md has no row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${entry.status} |`);
    expect(row).toContain(`\`${entry.type}\``);
  });
});
