#!/usr/bin/env node
// `npm run docs`: writes the generated pages of docs/ (the error codes, the settings, the index of
// the decision records) from their sources in src/, built first by the launcher (G291). A test
// fails when a page on disk differs from what this writes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { generatedPages } = await import(path.join(root, 'dist', 'docs', 'generate.js'));
for (const [file, text] of Object.entries(generatedPages(root))) {
  const target = path.join(root, file);
  const before = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined;
  if (before === text) continue;
  fs.writeFileSync(target, text);
  console.log(`wrote ${file}`);
}
