import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The directions imports may take between the folders of src/ (G392): the store knows no HTTP,
 * no provider and no route; the rate-limit backends know no store and no HTTP; providers know
 * nothing of the task engine or the routes, and no provider another's folder; routes reach the
 * store only through services.
 * Import cycles between files are Biome's `noImportCycles` (G390).
 */

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Every non-test source file of src/, relative to it (`store/types.ts`). */
function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.relative(SRC, full)] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** The src/ files a file imports (type imports and dynamic imports included), relative to src/. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(SRC, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]!;
    if (!spec.startsWith('.')) continue;
    out.push(path.relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), spec)).replace(/\.js$/, '.ts'));
  }
  return out;
}

const FILES = sourceFiles();
const under = (file: string, folder: string): boolean => file.startsWith(`${folder}/`);

/** `file imports target` for every import of a file under `from` into one under any of `to`. */
function crossings(from: string, to: readonly string[]): string[] {
  return FILES.filter((f) => under(f, from)).flatMap((f) =>
    importsOf(f)
      .filter((t) => to.some((folder) => under(t, folder)))
      .map((t) => `${f} imports ${t}`),
  );
}

describe('layers: which folders may import which', () => {
  it('finds the files and their imports (the rule below would pass vacuously otherwise)', () => {
    expect(FILES).toContain('store/types.ts');
    expect(importsOf('tasks/check-delay.ts')).toContain('providers/types.ts');
  });

  it('the store imports no HTTP, provider or route file', () => {
    expect(crossings('store', ['http', 'providers', 'routes'])).toEqual([]);
  });

  it('the rate-limit backends import neither the store nor HTTP', () => {
    expect(crossings('limits', ['store', 'http', 'routes'])).toEqual([]);
  });

  it('providers import nothing of the task engine or the routes', () => {
    expect(crossings('providers', ['tasks', 'routes'])).toEqual([]);
  });

  it("no provider imports another provider's folder: what they share is in providers/toolkit/ (or callbacks/)", () => {
    const shared = ['toolkit', 'callbacks'];
    const folders = fs
      .readdirSync(path.join(SRC, 'providers'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders).toContain('toolkit');
    const crossing = folders.flatMap((own) =>
      crossings(
        `providers/${own}`,
        folders.filter((f) => f !== own && !shared.includes(f)).map((f) => `providers/${f}`),
      ),
    );
    expect(crossing).toEqual([]);
  });

  it('routes reach the store only through services', () => {
    expect(crossings('routes', ['store'])).toEqual([]);
  });

  it('routes/index.ts only lists registrars: it declares nothing else', () => {
    const text = fs.readFileSync(path.join(SRC, 'routes/index.ts'), 'utf8');
    expect(text.match(/^export (?:interface|type|function|class) /gm) ?? []).toEqual([]);
  });
  it('TypeBox comes through src/typebox.ts (its CommonJS build), values and types alike (G423)', () => {
    const direct = /^\s*(?:import|export)\s[^'"]*?from\s*'@sinclair\/typebox/m;
    expect(direct.test("import { Type, type Static } from '@sinclair/typebox';")).toBe(true); // what the rule catches
    expect(direct.test("import type { Static } from '@sinclair/typebox/value';")).toBe(true);
    const offenders = FILES.filter((f) => f !== 'typebox.ts' && direct.test(fs.readFileSync(path.join(SRC, f), 'utf8')));
    expect(offenders).toEqual([]);
    expect(FILES.filter((f) => importsOf(f).includes('typebox.ts')).length).toBeGreaterThan(40);
  });
});
