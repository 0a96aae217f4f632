/**
 * What the documentation checks read (G291): the repository's files, the links and anchors of a
 * markdown page as GitHub renders them, and the places in code that name a page of docs/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { headingSlug } from '../../src/docs/decision-records.js';
import { ROOT } from './process.js';

export { ROOT };

const SKIP = new Set(['node_modules', 'dist', '.git', 'data', 'coverage']);

/** Files under `dir` (relative to the repository, `/`-separated) whose name passes `keep`. */
export function filesUnder(dir: string, keep: (file: string) => boolean = () => true): string[] {
  const out: string[] = [];
  const visit = (rel: string): void => {
    const abs = path.join(ROOT, rel);
    if (!fs.existsSync(abs)) return;
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) visit(child);
      else if (e.isFile() && keep(child)) out.push(child);
    }
  };
  visit(dir);
  return out.sort();
}

export function read(rel: string): string {
  return fs.readFileSync(path.join(ROOT, rel), 'utf8');
}

/** The text of a markdown page outside fenced code blocks and inline code, line by line. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '``');
  });
}

/** The relative links of a markdown page: `[text](target)`, web and mail links left out. */
export function relativeLinks(text: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  proseLines(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (!/^(https?:|mailto:)/.test(target)) links.push({ target, line: i + 1 });
    }
  });
  return links;
}

/** Every anchor a page offers: its headings' (duplicates numbered as GitHub does) and explicit `id`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6} (.+?)\s*#*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]!);
      const n = seen.get(slug) ?? 0;
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
      seen.set(slug, n + 1);
    }
    for (const m of line.matchAll(/\bid="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** Whether `rel` (a file or folder of the repository) exists, and `anchor`, when given, is on that page. */
export function resolves(rel: string, anchor: string | undefined): string | undefined {
  const abs = path.join(ROOT, rel);
  if (!fs.existsSync(abs)) return `${rel} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!rel.endsWith('.md')) return `#${anchor} on ${rel}, which is not a markdown page`;
  return anchorsOf(read(rel)).has(anchor) ? undefined : `${rel} has no anchor #${anchor}`;
}
