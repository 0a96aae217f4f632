/**
 * The documentation's links resolve (G291): every relative link of README.md, CONTRIBUTING.md,
 * CHANGELOG.md, docs/ and the SDK's README points at a file that exists and, with `#anchor`, at an
 * anchor that page has; every `docs/...` path named in code exists, with its anchor.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder, read, relativeLinks, resolves } from '../helpers/docs-tree.js';

const PAGES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'packages/client/README.md', ...filesUnder('docs', (f) => f.endsWith('.md'))];
const CODE = ['src', 'test', 'bench', 'scripts', 'bin', 'packages/client/src'].flatMap((dir) => filesUnder(dir, (f) => /\.(ts|js)$/.test(f)));

describe('relative links in the documentation resolve', () => {
  it('finds the pages', () => expect(PAGES.length).toBeGreaterThan(40));

  it.each(PAGES)('%s', (page) => {
    const problems: string[] = [];
    for (const { target, line } of relativeLinks(read(page))) {
      const [file = '', anchor] = target.split('#');
      const rel = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURI(file)));
      const problem = rel.startsWith('..') ? `${rel} is outside the repository` : resolves(rel, anchor);
      if (problem) problems.push(`line ${line}: ${target}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});

describe('docs/ paths named in code exist', () => {
  it('finds the code', () => expect(CODE.length).toBeGreaterThan(500));

  it('every docs/... page, folder and anchor named in src, test, bench, scripts, bin and the SDK', () => {
    const problems: string[] = [];
    for (const file of CODE) {
      for (const m of read(file).matchAll(/(?<![\w./-])(docs\/[\w./-]*[\w/])(?:#([\w-]+))?/g)) {
        const problem = resolves(m[1]!, m[2]);
        if (problem) problems.push(`${file}: ${m[0]}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
