/**
 * Every setting the code reads is in the settings table, so in docs/reference/settings.md (G290,
 * G291): each `MEDIAGATE_*` name anywhere in src/, and every other upper-case name read from the
 * environment (`env.PORT`, `process.env.HOST`, `env['OTEL_SERVICE_NAME']`). Names the documentation
 * mentions are settings too (or the test suite's own `MEDIAGATE_TEST_*`).
 */
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/settings/table.js';
import { filesUnder, read } from '../helpers/docs-tree.js';

const known = new Set(Object.keys(SETTINGS));
const code = filesUnder('src', (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

function settingsReadIn(text: string): string[] {
  return [
    ...[...text.matchAll(/\bMEDIAGATE_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]),
    ...[...text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)\b|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g)].map((m) => m[1] ?? m[2]!),
  ];
}

describe('settings read by src/ are in the settings table', () => {
  it('finds them', () => expect(new Set(code.flatMap((f) => settingsReadIn(read(f)))).size).toBeGreaterThan(70));

  it.each(code)('%s', (file) => {
    expect(settingsReadIn(read(file)).filter((name) => !known.has(name))).toEqual([]);
  });
});

describe('settings named in the documentation exist', () => {
  const pages = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs', (f) => f.endsWith('.md'))];
  it.each(pages)('%s', (page) => {
    const named = [...read(page).matchAll(/\bMEDIAGATE_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]);
    expect(named.filter((name) => !known.has(name) && !name.startsWith('MEDIAGATE_TEST_'))).toEqual([]);
  });
});

describe("README's settings list", () => {
  it('names every setting of the table, each linked to its row of the reference', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('\n## Settings\n'), readme.indexOf('\n## Development\n'));
    const missing = Object.keys(SETTINGS).filter((name) => !section.includes(`[\`${name}\`](docs/reference/settings.md#${name.toLowerCase()})`));
    expect(missing).toEqual([]);
  });
});
