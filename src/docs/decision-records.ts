/**
 * The decision records of docs/decisions/ as the docs generator and the checks read them (G291):
 * a record is an `<a id="g84"></a>` anchor followed by its `## G84. Title` heading, in any file of
 * the folder (topic pages, and `new-<branch>.md` files of work in progress).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DecisionRecord {
  /** `G84`, `G9a`, `D19`. */
  id: string;
  title: string;
  /** File name inside docs/decisions/. */
  file: string;
}

export interface DecisionPage {
  file: string;
  /** The page's `# ` heading. */
  title: string;
  records: DecisionRecord[];
}

const ANCHOR = /<a id="([gd]\d+[a-z]?)"><\/a>/;
const HEADING = /^#{2,3} ([GD]\d+[a-z]?)\. (.+)$/;

/** Every page of `dir` (sorted by file name, the index itself left out) with its records in order. */
export function readDecisionPages(dir: string): DecisionPage[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md').sort().map((file) => {
    const lines = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
    const title = lines.find((l) => l.startsWith('# '))?.slice(2).trim() ?? file;
    const records: DecisionRecord[] = [];
    lines.forEach((line, i) => {
      const anchor = ANCHOR.exec(line);
      if (!anchor) return;
      const heading = HEADING.exec(lines[i + 1] ?? '');
      const id = anchor[1]!.toUpperCase().replace(/([0-9])([A-Z])$/, (_m, d: string, s: string) => d + s.toLowerCase());
      records.push({ id, title: heading && heading[1] === id ? heading[2]!.trim() : '', file });
    });
    return { file, title, records };
  });
}

/** Record id (`G84`) -> the file holding it; the first one wins (the checks report duplicates). */
export function recordFiles(pages: readonly DecisionPage[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const page of pages) for (const r of page.records) if (!files.has(r.id)) files.set(r.id, page.file);
  return files;
}

/**
 * Turns record numbers in `text` into links relative to `prefix` (`../decisions/`), outside code
 * spans and existing links; numbers with no record stay as they are.
 */
export function linkRecords(text: string, files: ReadonlyMap<string, string>, prefix: string): string {
  return text.split(/(`[^`]*`|\[[^\]]*\]\([^)]*\))/).map((part, i) => {
    if (i % 2 === 1) return part;
    return part.replace(/(?<![\w/#[])([GD]\d{1,3}[a-z]?)(?![\w\]])/g, (id: string) => {
      const file = files.get(id);
      return file === undefined ? id : `[${id}](${prefix}${file}#${id.toLowerCase()})`;
    });
  }).join('');
}
