#!/usr/bin/env node
// Bundles the part of TypeBox the gateway uses (`Type`, `Value`, `ValueErrorType`: what
// src/typebox.ts hands out) into one CommonJS file, dist/vendor/typebox.cjs (G484), with Rolldown
// (a development dependency). The package is ~250 files, each resolved, read and compiled on its
// own at every start of a gateway or a command; the bundle is one file, shaken down to what is used.
// Run by `npm run build` and by the launcher (bin/mediagate.js) when the bundle is missing or older
// than the installed TypeBox. `node bin/vendor-typebox.js` runs it alone.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const VENDOR_TYPEBOX = path.join(root, 'dist', 'vendor', 'typebox.cjs');
/** What the bundle is made from: the installed TypeBox, and this script (its list of exports). */
const sources = [path.join(root, 'node_modules', '@sinclair', 'typebox', 'package.json'), fileURLToPath(import.meta.url)];

/** Whether the bundle is missing or older than what it is made from. */
export function typeboxBundleStale() {
  if (!fs.existsSync(VENDOR_TYPEBOX)) return true;
  const built = fs.statSync(VENDOR_TYPEBOX).mtimeMs;
  return sources.some((source) => fs.existsSync(source) && fs.statSync(source).mtimeMs > built);
}

/**
 * Writes dist/vendor/typebox.cjs: built under names of this process's own beside it, then renamed
 * into place once whole, so builds that run at once (two first starts) each write a whole file.
 */
export async function bundleTypebox() {
  const { build } = await import('rolldown');
  const own = `${process.pid}-${Date.now().toString(36)}`;
  const entry = path.join(path.dirname(VENDOR_TYPEBOX), `typebox-entry-${own}.mjs`);
  const building = `${VENDOR_TYPEBOX}.${own}.building`;
  fs.mkdirSync(path.dirname(VENDOR_TYPEBOX), { recursive: true });
  fs.writeFileSync(entry, "export { Type } from '@sinclair/typebox';\nexport { Value, ValueErrorType } from '@sinclair/typebox/value';\n");
  try {
    await build({
      input: entry,
      cwd: root,
      platform: 'node',
      logLevel: 'warn',
      output: {
        file: building,
        format: 'cjs',
        banner: '// TypeBox (MIT, https://github.com/sinclairzx81/typebox), bundled by bin/vendor-typebox.js: see G484',
      },
    });
    fs.renameSync(building, VENDOR_TYPEBOX);
  } finally {
    fs.rmSync(entry, { force: true });
    fs.rmSync(building, { force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bundleTypebox();
