#!/usr/bin/env node
// Launcher for `npm start` and `npx mediagate`: compiles src/ to dist/ when dist is missing or
// older than any source file (compiler output goes to stderr), then runs the CLI.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(root, 'dist', 'main', 'cli.js');
const stamp = path.join(root, 'dist', '.tsbuildinfo');

function newestSource(dir) {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function needsBuild() {
  if (!fs.existsSync(entry) || !fs.existsSync(stamp)) return true;
  const src = path.join(root, 'src');
  return fs.existsSync(src) && newestSource(src) > fs.statSync(stamp).mtimeMs;
}

if (needsBuild()) {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('mediagate: dist/ is missing and TypeScript is not installed; run `npm ci` (with dev dependencies) first');
    process.exit(1);
  }
  process.stderr.write('mediagate: building...\n');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: ['ignore', 2, 2] });
  fs.utimesSync(stamp, new Date(), new Date());
}

await import(entry);
