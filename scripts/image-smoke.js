#!/usr/bin/env node
// After scripts/image-prune.js, in the image's build stage (dist/ built, node_modules pruned): loads every package the built gateway imports, the way it imports it, and uses the
// native and binary parts (G351). Exits 1 naming what fails.
//   node scripts/image-smoke.js
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
/** @type {string[]} */
const failures = [];

/**
 * Runs `fn` (awaited when it returns a promise); a throw is a failure named `what`.
 * @param {string} what
 * @param {() => unknown} fn
 */
async function check(what, fn) {
  try {
    await fn();
  } catch (err) {
    failures.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Import and export statements (at the start of a line, as tsc writes them), bare `import 'x'`, and `import('x')`. */
const STATEMENTS = /^\s*(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'|^\s*import\s*'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)/gm;
const PACKAGE = /^(?:@[\w.-]+\/)?[\w-][\w.-]*(?:\/[\w.@-]+)*$/;

/** The bare specifiers of every `import ... from 'x'` and `import('x')` in the built gateway and SDK. */
function specifiers() {
  /** @type {Set<string>} */
  const found = new Set();
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js'))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(STATEMENTS)) {
          const name = m[1] ?? m[2] ?? m[3];
          // a package name, not a word of a message that happens to follow "from"
          if (name && PACKAGE.test(name) && !name.startsWith('node:')) found.add(name);
        }
    }
  };
  walk(path.join(root, 'dist'));
  walk(path.join(root, 'packages', 'client', 'dist'));
  return [...found].sort();
}

const names = specifiers();
for (const name of names) await check(`import '${name}'`, () => import(name));

// loaded with require by the gateway: the binaries' packages, and the tokenizer in the counting thread
await check('gpt-tokenizer (ESM and CommonJS)', async () => {
  const esm = await import('gpt-tokenizer');
  const cjs = require('gpt-tokenizer');
  if (esm.encode('hello world').length !== 2 || cjs.encode('hello world').length !== 2) throw new Error('unexpected token count');
});
for (const tool of ['@ffmpeg-installer/ffmpeg', '@ffprobe-installer/ffprobe'])
  await check(tool, () => execFileSync(require(tool).path, ['-version'], { stdio: 'ignore' }));
await check('better-sqlite3', () => {
  const Database = /** @type {typeof import('better-sqlite3')} */ (require('better-sqlite3'));
  const db = new Database(':memory:');
  const row = /** @type {{ v?: string } | undefined} */ (db.prepare('SELECT sqlite_version() AS v').get());
  if (!row?.v) throw new Error('no version');
  db.close();
});
await check('sharp', async () => {
  const sharp = (await import('sharp')).default;
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
    .png()
    .toBuffer();
  const meta = await sharp(png).metadata();
  if (meta.width !== 8 || meta.format !== 'png') throw new Error('unexpected output');
});

if (failures.length > 0) {
  console.error(`image-smoke: FAILED\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`image-smoke: ${names.length} packages load; tokenizer, ffmpeg, ffprobe, SQLite and sharp work`);
