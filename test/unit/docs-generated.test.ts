/**
 * The generated pages of docs/ are what `npm run docs` writes from their sources (G291): the error
 * codes from ERROR_CATALOG, the settings from the settings table, the index of the decision records
 * from docs/decisions/. A stale page fails here; run `npm run docs` and commit the result.
 */
import { describe, expect, it } from 'vitest';
import { generatedPages } from '../../src/docs/generate.js';
import { read, ROOT } from '../helpers/docs-tree.js';

describe('generated pages are up to date (npm run docs)', () => {
  it.each(Object.entries(generatedPages(ROOT)))('%s', (file, text) => {
    expect(read(file), `${file} is stale: run npm run docs`).toBe(text);
  });
});
