#!/usr/bin/env node
// Launcher for `npm start` and `npx mediagate`: compiles packages/client/src/ and src/ to their dist/
// when missing or older than any source file (compiler output goes to stderr), builds the web console
// (console/ -> console/dist/, with Vite) likewise when Vite is installed, then runs the CLI.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { bundleTypebox, typeboxBundleStale } from './vendor-typebox.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(root, 'dist', 'main', 'cli.js');
const stamp = path.join(root, 'dist', '.tsbuildinfo');

/**
 * The newest modification time (ms) of any file under `dir`.
 * @param {string} dir
 * @returns {number}
 */
function newestSource(dir) {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Where `specifier` resolves from here, or undefined when it is not installed (the development
 * tools are absent from an install without dev dependencies).
 * @param {string} specifier
 * @returns {string | undefined}
 */
function installed(specifier) {
  try {
    return createRequire(import.meta.url).resolve(specifier);
  } catch {
    return undefined;
  }
}

/** The SDK (packages/client, which the client commands import from its dist/) first, then the gateway. */
const projects = [
  {
    src: path.join(root, 'packages', 'client', 'src'),
    entry: path.join(root, 'packages', 'client', 'dist', 'index.js'),
    stamp: path.join(root, 'packages', 'client', 'dist', '.tsbuildinfo'),
    config: path.join(root, 'packages', 'client', 'tsconfig.json'),
  },
  { src: path.join(root, 'src'), entry, stamp, config: path.join(root, 'tsconfig.build.json') },
];

/**
 * Whether a project's dist/ is missing or older than a file of its sources.
 * @param {(typeof projects)[number]} p
 */
function needsBuild(p) {
  if (!fs.existsSync(p.entry) || !fs.existsSync(p.stamp)) return true;
  return fs.existsSync(p.src) && newestSource(p.src) > fs.statSync(p.stamp).mtimeMs;
}

const command = process.argv[2];
const stale = projects.filter(needsBuild);
if (stale.length > 0) {
  const tsc = installed('typescript/bin/tsc');
  if (!tsc) {
    console.error('mediagate: dist/ is missing and TypeScript is not installed; run `npm ci` (with dev dependencies) first');
    process.exit(1);
  }
  process.stderr.write('mediagate: building...\n');
  for (const p of stale) {
    // Emit only (G473): `npm run typecheck` checks the types (beside the suite in `npm test`, and in
    // CI); checking them here too cost every `npm test` about 15 s of CPU and every first start ~10 s.
    execFileSync(process.execPath, [tsc, '-p', p.config, '--noCheck'], { cwd: root, stdio: ['ignore', 2, 2] });
    fs.utimesSync(p.stamp, new Date(), new Date());
  }
}

// TypeBox in one file (G484), when missing or older than the installed package; without Rolldown
// (an install without dev dependencies) the gateway loads the package itself.
if (typeboxBundleStale() && installed('rolldown')) await bundleTypebox();

// The web console (G360): rebuilt when a file of console/src is newer than its build; without Vite
// (an install without dev dependencies) the gateway serves what was built, or says how to build it.
const consoleRoot = path.join(root, 'console');
const consoleBuilt = path.join(consoleRoot, 'dist', 'index.html');
// Only for the commands that serve it (`serve`, the default) or build (`build`, run by `npm run docs`).
if ((command === undefined || command === 'serve' || command === 'build') && fs.existsSync(path.join(consoleRoot, 'src'))) {
  const stale = !fs.existsSync(consoleBuilt) || newestSource(path.join(consoleRoot, 'src')) > fs.statSync(consoleBuilt).mtimeMs;
  const vitePackage = stale ? installed('vite/package.json') : undefined;
  const vite = vitePackage && path.join(path.dirname(vitePackage), 'bin', 'vite.js');
  if (stale && !vite)
    process.stderr.write('mediagate: the web console is not built and Vite is not installed; run `npm ci` then `npm run build` to serve it\n');
  if (vite) {
    process.stderr.write('mediagate: building the web console...\n');
    execFileSync(process.execPath, [vite, 'build', '--config', path.join(consoleRoot, 'vite.config.ts'), '--logLevel', 'warn'], {
      cwd: root,
      stdio: ['ignore', 2, 2],
    });
  }
}

// Start light (G299): while the server loads and starts (modules, schemas compiled once), V8 would
// double its young generation at each collection that finds most of it alive, and never give the
// space back when idle (~16 MB). So it does not grow until the server listens; then V8's default
// (2) applies again and load grows it as before. Left alone when the young generation is tuned on
// the command line or in NODE_OPTIONS.
const serving = command === undefined || command === 'serve';
const tuned = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) =>
  /^--(semi-space-growth-factor|(max|min)-semi-space-size)\b/.test(a),
);
const holdYoung = serving && !tuned;
if (holdYoung) v8.setFlagsFromString('--semi-space-growth-factor=1');
// The client commands talk to a gateway over HTTP: their own entry does not load the gateway.
await import(command === 'generate' || command === 'tasks' ? path.join(root, 'dist', 'main', 'client-cli.js') : entry);
// the CLI's `serve` returns once the server listens
if (holdYoung) v8.setFlagsFromString('--semi-space-growth-factor=2');
