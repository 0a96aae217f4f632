/**
 * The generated pages of docs/ (G291), by path relative to the repository: what `npm run docs`
 * writes (scripts/generate-docs.js) and what the test of the generated pages compares with the files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readDecisionPages, recordTargets } from './decision-records.js';
import { renderDecisionsIndex } from './decisions-index.js';
import { renderErrorsPage } from './errors-page.js';
import { renderSettingsPage } from './settings-page.js';

export function generatedPages(root: string): Record<string, string> {
  const decisionsDir = path.join(root, 'docs', 'decisions');
  const pages = readDecisionPages(decisionsDir);
  const readme = fs.readFileSync(path.join(decisionsDir, 'README.md'), 'utf8');
  return {
    'docs/reference/errors.md': renderErrorsPage(),
    'docs/reference/settings.md': renderSettingsPage(recordTargets(pages)),
    'docs/decisions/README.md': renderDecisionsIndex(readme, pages),
  };
}
