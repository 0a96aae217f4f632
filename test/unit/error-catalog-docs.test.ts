import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/errors.js';
import { read } from '../helpers/docs-tree.js';

const doc = read('docs/reference/errors.md');
const ROW = /^\| <a id="([a-z_]+)"><\/a>`([a-z_]+)` \| (\d{3}) \| `([a-z_]+)` \|/;

describe('every error code is documented in docs/reference/errors.md', () => {
  it.each(Object.entries(ERROR_CATALOG))('%s', (code, entry) => {
    const row = doc.split('\n').find((line) => line.startsWith(`| <a id="${code}"></a>\`${code}\` |`));
    expect(row, `docs/reference/errors.md has no row for ${code}: run npm run docs`).toBeDefined();
    expect(row).toContain(`| ${entry.status} |`);
    expect(row).toContain(`\`${entry.type}\``);
  });
});

describe('every error code documented in docs/reference/errors.md exists with that status and type', () => {
  const rows = doc
    .split('\n')
    .map((line) => ROW.exec(line))
    .filter((m): m is RegExpExecArray => m !== null);
  it('the table is found', () => expect(rows.length).toBeGreaterThan(20));
  it.each(rows.map((m) => ({ anchor: m[1]!, code: m[2]!, status: Number(m[3]), type: m[4]! })))('$code', ({ anchor, code, status, type }) => {
    expect(anchor).toBe(code);
    expect(ERROR_CATALOG).toHaveProperty(code);
    expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG]).toMatchObject({ status, type });
  });
});
