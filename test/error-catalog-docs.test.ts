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

describe('every error code documented in docs/API.md exists with that status and type', () => {
  const rows = doc.split('\n').map((line) => /^\| `([a-z_]+)` \| (\d{3}) \| `([a-z_]+)` \|/.exec(line)).filter((m): m is RegExpExecArray => m !== null);
  it('the table is found', () => expect(rows.length).toBeGreaterThan(20));
  it.each(rows.map((m) => ({ code: m[1]!, status: Number(m[2]), type: m[3]! })))('$code', ({ code, status, type }) => {
    expect(ERROR_CATALOG).toHaveProperty(code);
    expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG]).toMatchObject({ status, type });
  });
});
