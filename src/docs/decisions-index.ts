/**
 * The list of records in docs/decisions/README.md, between its two markers, written by
 * `npm run docs` from the files of the folder (G291).
 */
import { recordTarget, type DecisionPage } from './decision-records.js';

export const INDEX_START = '<!-- The records, by page: written by `npm run docs` from the files of this folder. -->';
export const INDEX_END = '<!-- End of the records. -->';

/** `readme` with the text between the markers replaced by the table of `pages`. */
export function renderDecisionsIndex(readme: string, pages: readonly DecisionPage[]): string {
  const start = readme.indexOf(INDEX_START);
  const end = readme.indexOf(INDEX_END);
  if (start < 0 || end < start) throw new Error(`docs/decisions/README.md needs the markers ${INDEX_START} and ${INDEX_END}`);
  const rows = pages.map((p) => `| [${p.title}](${p.file}) | ${p.records.map((r) => `[${r.id}](${recordTarget(r)})`).join(', ')} |`);
  const table = `| Page | Records |\n|---|---|\n${rows.join('\n')}\n`;
  return `${readme.slice(0, start + INDEX_START.length)}\n${table}${readme.slice(end)}`;
}
