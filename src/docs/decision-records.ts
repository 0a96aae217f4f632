/**
 * The decision records of docs/decisions/ as the docs generator and the checks read them (G291):
 * a record is a heading `## G84. Title` (or `### G84 Title`), best preceded by its stable anchor
 * `<a id="g84"></a>`, or a list item `- **G84. Title.** ...`, in any file of the folder (topic
 * pages, and `new-<branch>.md` files of work in progress).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DecisionRecord {
  /** `G84`, `G9a`, `D19`. */
  id: string;
  title: string;
  /** File name inside docs/decisions/. */
  file: string;
  /** The anchor that reaches it on its page (`g84`), or undefined for a list item. */
  anchor: string | undefined;
}

export interface DecisionPage {
  file: string;
  /** The page's `# ` heading. */
  title: string;
  records: DecisionRecord[];
}

const ANCHOR = /^<a id="([^"]+)"><\/a>$/;
const HEADING = /^#{2,4} ([GD]\d{1,3}[a-z]?)\b\.?\s+(.+?)\s*$/;
const ITEM = /^- \*\*([GD]\d{1,3}[a-z]?)\.?\s*(.*?)\.?\*\*/;

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
export function headingSlug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{M}\p{N}_ -]/gu, '')
    .replace(/ /g, '-');
}

/** The records of one page, in order. */
export function readRecords(file: string, text: string): DecisionRecord[] {
  const records: DecisionRecord[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const heading = HEADING.exec(line);
    if (heading) {
      const id = heading[1]!;
      const above = ANCHOR.exec(lines[i - 1] ?? '');
      const anchor = above && above[1] === id.toLowerCase() ? above[1] : headingSlug(line.replace(/^#+ /, ''));
      records.push({ id, title: heading[2]!, file, anchor });
      return;
    }
    const item = ITEM.exec(line);
    if (item) records.push({ id: item[1]!, title: item[2]!, file, anchor: undefined });
  });
  return records;
}

/** Every page of `dir` (sorted by file name, the index itself left out) with its records in order. */
export function readDecisionPages(dir: string): DecisionPage[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .sort()
    .map((file) => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const title =
        text
          .split('\n')
          .find((l) => l.startsWith('# '))
          ?.slice(2)
          .trim() ?? file;
      return { file, title, records: readRecords(file, text) };
    });
}

/** Where a record is, relative to docs/decisions/: `task-engine.md#g84`. */
export function recordTarget(r: DecisionRecord): string {
  return r.anchor === undefined ? r.file : `${r.file}#${r.anchor}`;
}

/** Record id (`G84`) -> where it is; the first one wins (the checks report duplicates). */
export function recordTargets(pages: readonly DecisionPage[]): Map<string, string> {
  const targets = new Map<string, string>();
  for (const page of pages) for (const r of page.records) if (!targets.has(r.id)) targets.set(r.id, recordTarget(r));
  return targets;
}

/**
 * Turns record numbers in `text` into links relative to `prefix` (`../decisions/`), outside code
 * spans and existing links; numbers with no record stay as they are.
 */
export function linkRecords(text: string, targets: ReadonlyMap<string, string>, prefix: string): string {
  return text
    .split(/(`[^`]*`|\[[^\]]*\]\([^)]*\))/)
    .map((part, i) => {
      if (i % 2 === 1) return part;
      return part.replace(/(?<![\w/#[])([GD]\d{1,3}[a-z]?)(?![\w\]])/g, (id: string) => {
        const target = targets.get(id);
        return target === undefined ? id : `[${id}](${prefix}${target})`;
      });
    })
    .join('');
}
