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
export const VENDOR_TYPEBOX = path.join(root, 'dist', 'vendor', 'typebox.cjs');
const installed = path.join(root, 'node_modules', '@sinclair', 'typebox', 'package.json');

/** Whether the bundle is missing or older than the installed TypeBox. */
export function typeboxBundleStale() {
  if (!fs.existsSync(VENDOR_TYPEBOX)) return true;
  return fs.existsSync(installed) && fs.statSync(installed).mtimeMs > fs.statSync(VENDOR_TYPEBOX).mtimeMs;
}

/** Writes dist/vendor/typebox.cjs (through a file beside it, renamed once whole). */
export async function bundleTypebox() {
  const { build } = await import('rolldown');
  const entry = path.join(path.dirname(VENDOR_TYPEBOX), 'typebox-entry.mjs');
  const building = `${VENDOR_TYPEBOX}.building`;
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
