/**
 * scripts/image-prune.js (G351): what it takes out of the image's node_modules, and what it must
 * leave, on a made-up node_modules folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { prune } = (await import(path.join(ROOT, 'scripts', 'image-prune.js'))) as { prune: (dir: string) => Record<string, number> };

let nm: string;

function put(rel: string, text = 'x'): void {
  const file = path.join(nm, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
function pkg(name: string, fields: Record<string, unknown>): void {
  put(`${name}/package.json`, JSON.stringify({ name, version: '1.0.0', ...fields }));
}
const has = (rel: string): boolean => fs.existsSync(path.join(nm, rel));

beforeEach(() => {
  nm = fs.mkdtempSync(path.join(os.tmpdir(), 'image-prune-'));
});
afterEach(() => fs.rmSync(nm, { recursive: true, force: true }));

describe('image-prune', () => {
  it('removes the ES build for bundlers when Node resolves nothing into it, keeps it when exports do', () => {
    pkg('@aws/no-exports', { main: './dist-cjs/index.js', module: './dist-es/index.js' });
    put('@aws/no-exports/dist-cjs/index.js');
    put('@aws/no-exports/dist-es/index.js');
    pkg('node-first', { exports: { '.': { module: './dist-es/index.js', node: './dist-cjs/index.js', import: './dist-es/index.js' } } });
    put('node-first/dist-cjs/index.js');
    put('node-first/dist-es/index.js');
    pkg('import-es', { main: './build/src/index.js', exports: { '.': { import: './build/esm/index.js', default: './build/src/index.js' } } });
    put('import-es/build/src/index.js');
    put('import-es/build/esm/index.js');
    pkg('esnext-only', { main: 'build/src/index.js', esnext: 'build/esnext/index.js', module: 'build/esm/index.js' });
    put('esnext-only/build/src/index.js');
    put('esnext-only/build/esm/index.js');
    put('esnext-only/build/esnext/index.js');
    prune(nm);
    expect(has('@aws/no-exports/dist-es')).toBe(false);
    expect(has('@aws/no-exports/dist-cjs/index.js')).toBe(true);
    expect(has('node-first/dist-es')).toBe(false);
    expect(has('import-es/build/esm/index.js')).toBe(true);
    expect(has('esnext-only/build/esm')).toBe(false);
    expect(has('esnext-only/build/esnext')).toBe(false);
    expect(has('esnext-only/build/src/index.js')).toBe(true);
  });

  it('removes tests, examples, maps, declarations and docs; keeps licenses and what an entry names', () => {
    pkg('lib', { main: 'index.js' });
    for (const f of [
      'index.js',
      'index.js.map',
      'index.d.ts',
      'src/index.ts',
      'README.md',
      'LICENSE.md',
      'LICENSE',
      'NOTICE.md',
      'test/a.js',
      'examples/b.js',
      'x.test.js',
      '.github/workflows/ci.yml',
    ])
      put(`lib/${f}`);
    pkg('tested', { main: 'test/index.js' });
    put('tested/test/index.js');
    pkg('lib/node_modules/nested', { main: 'index.js' });
    put('lib/node_modules/nested/index.js');
    put('lib/node_modules/nested/index.d.ts');
    const removed = prune(nm);
    expect(['index.js', 'LICENSE.md', 'LICENSE', 'NOTICE.md', 'package.json'].filter((f) => has(`lib/${f}`))).toHaveLength(5);
    expect(['index.js.map', 'index.d.ts', 'src/index.ts', 'README.md', 'test', 'examples', 'x.test.js', '.github'].filter((f) => has(`lib/${f}`))).toEqual([]);
    expect(has('tested/test/index.js')).toBe(true);
    expect(has('lib/node_modules/nested/index.js')).toBe(true);
    expect(has('lib/node_modules/nested/index.d.ts')).toBe(false);
    expect(Object.values(removed).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it('keeps o200k_base of gpt-tokenizer in both builds and better-sqlite3 addon, drops the rest of them', () => {
    pkg('gpt-tokenizer', { exports: { '.': { import: './esm/main.js', require: './cjs/main.js' } } });
    for (const b of ['esm', 'cjs']) {
      for (const f of ['main.js', 'bpeRanks/o200k_base.js', 'bpeRanks/cl100k_base.js', 'encoding/o200k_base.js', 'encoding/p50k_edit.js', 'model/gpt-4.js'])
        put(`gpt-tokenizer/${b}/${f}`);
    }
    put('gpt-tokenizer/dist/cl100k_base.js');
    pkg('better-sqlite3', { main: 'lib/index.js' });
    for (const f of ['lib/index.js', 'LICENSE', 'src/x.cpp', 'deps/sqlite3.c', 'build/Makefile', 'build/Release/obj/x.o', 'build/Release/better_sqlite3.node'])
      put(`better-sqlite3/${f}`);
    prune(nm);
    for (const b of ['esm', 'cjs']) {
      expect(has(`gpt-tokenizer/${b}/main.js`) && has(`gpt-tokenizer/${b}/bpeRanks/o200k_base.js`) && has(`gpt-tokenizer/${b}/encoding/o200k_base.js`)).toBe(
        true,
      );
      expect([`${b}/bpeRanks/cl100k_base.js`, `${b}/encoding/p50k_edit.js`, `${b}/model`].filter((f) => has(`gpt-tokenizer/${f}`))).toEqual([]);
    }
    expect(has('gpt-tokenizer/dist')).toBe(false);
    expect(fs.readdirSync(path.join(nm, 'better-sqlite3')).sort()).toEqual(['LICENSE', 'build', 'lib', 'package.json']);
    expect(fs.readdirSync(path.join(nm, 'better-sqlite3', 'build'))).toEqual(['Release']);
    expect(fs.readdirSync(path.join(nm, 'better-sqlite3', 'build', 'Release'))).toEqual(['better_sqlite3.node']);
  });
});
