/**
 * Decision records and the repository's independence (G291): every record number cited in src/
 * has a record under docs/decisions/ (in any file there), no number has two records, no file names
 * a contract file that is not in the repository, and no file points outside the repository.
 */
import { describe, expect, it } from 'vitest';
import { readDecisionPages, readRecords } from '../../src/docs/decision-records.js';
import { filesUnder, read, ROOT } from '../helpers/docs-tree.js';

const pages = readDecisionPages(`${ROOT}/docs/decisions`);
const records = pages.flatMap((p) => p.records.map((r) => ({ ...r, file: p.file })));
const ids = new Set(records.map((r) => r.id));

/** `G60-G68` cites both ends; `G9a` is a record of its own. */
function citations(text: string): string[] {
  return [...text.matchAll(/(?<![\w$.-])([GD])(\d{1,3})([a-z]?)(?![\w])/g)].map((m) => `${m[1]}${m[2]}${m[3]}`);
}

describe('decision records', () => {
  it('are found, each with its heading', () => {
    expect(records.length).toBeGreaterThan(250);
    expect(records.filter((r) => r.title === '').map((r) => `${r.file}: ${r.id}`)).toEqual([]);
  });

  it('a record is an anchored heading, a heading of its own (new-<branch>.md files) or a list item', () => {
    const text = '<a id="g84"></a>\n## G84. Anchored\n\n### G256 Database faults are server faults\n\n- **G12.** Sandbox output\n- **G13. Markers.** text\n';
    expect(readRecords('x.md', text).map((r) => [r.id, r.title, r.anchor])).toEqual([
      ['G84', 'Anchored', 'g84'],
      ['G256', 'Database faults are server faults', 'g256-database-faults-are-server-faults'],
      ['G12', '', undefined],
      ['G13', 'Markers', undefined],
    ]);
  });

  it('no number has two records', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const r of records) {
      if (seen.has(r.id)) twice.push(`${r.id} in ${seen.get(r.id)} and ${r.file}`);
      seen.set(r.id, r.file);
    }
    expect(twice).toEqual([]);
  });

  it('every G and D number cited in src/ has a record', () => {
    const missing: string[] = [];
    for (const file of filesUnder('src', (f) => /\.(ts|js|json)$/.test(f))) {
      for (const id of citations(read(file))) if (!ids.has(id)) missing.push(`${file}: ${id}`);
    }
    expect(missing).toEqual([]);
  });
});

describe('the repository stands on its own', () => {
  const TEXT = /\.(ts|js|json|md|yml|yaml|sh|txt)$|^\.ci\/|(^|\/)[A-Za-z]+$/;
  const files = filesUnder('', (f) => TEXT.test(f) && f !== 'package-lock.json');

  it('no file names the interface or decisions files kept outside it', () => {
    const named = files.filter((f) => /\b(interface|decisions)\.md\b/.test(read(f)));
    expect(named).toEqual([]);
  });

  it('no file points at the folder outside the repository', () => {
    const outside = ['..', 'shared'].join('/');
    expect(files.filter((f) => read(f).includes(outside))).toEqual([]);
  });
});
