// Writes one benchmark's marked section of docs/BENCHMARKS.md (`<!-- bench:NAME:start -->` ...
// `<!-- bench:NAME:end -->`): replaced where it is, appended when new. Every bench script uses this.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** docs/BENCHMARKS.md of this checkout. */
export const BENCHMARKS_DOC = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'docs', 'BENCHMARKS.md');

/**
 * @param {string} name the section's marker name, e.g. `chat` for `<!-- bench:chat:start -->`
 * @param {string} text the section's markdown (without the markers)
 * @param {string} [file] the document (default docs/BENCHMARKS.md)
 */
export function writeDocSection(name, text, file = BENCHMARKS_DOC) {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${start}\n${text}\n${end}`;
  let doc = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  doc = a !== -1 && b > a ? doc.slice(0, a) + block + doc.slice(b + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, doc);
}
