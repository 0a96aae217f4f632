#!/usr/bin/env node
// The image's node_modules without what a running gateway never reads (G350, G351). The Dockerfile's
// build stage runs it after `npm prune --omit=dev`, then `scripts/image-smoke.js` loads what remains.
//   node scripts/image-prune.js NODE_MODULES    removes, and prints what each rule removed
// Every rule is about what Node itself reads, never a guess about a package's habits: a folder is
// only removed when no `main`, `bin` or `exports` target (under the conditions Node uses) is in it.
import fs from 'node:fs';
import path from 'node:path';

/** Conditions Node 20 matches in `exports`: `import` resolutions and `require` ones (require(esm) included). */
const ENVIRONMENTS = [
  ['node', 'import', 'module-sync', 'default'],
  ['node', 'require', 'module-sync', 'default'],
];
/** Folders holding a package's other builds (ES modules for bundlers): Node reaches them only through `exports`. */
const OTHER_BUILDS = ['dist-es', 'build/esm', 'build/esnext'];
/** Folders at a package's root that hold its tests, examples, benchmarks or documentation (and any dot-folder: .github, editors' and tools' state). */
const NOT_RUN = ['test', 'tests', '__tests__', 'example', 'examples', 'benchmark', 'benchmarks', 'bench', 'docs'];
/** Files no running gateway reads: source maps, type declarations, TypeScript sources (Node 20 runs none), tests, docs. */
const NOT_READ = /(\.map|\.d\.[cm]?ts|(?<!\.d)\.[cm]?ts|\.tsbuildinfo|\.(test|spec)\.[cm]?js|\.md|\.markdown)$/i;
/** ... but a license or notice stays whatever its extension (the licenses ask for it). */
const LICENSE = /^(licen[cs]e|notice|copying|authors)/i;

/**
 * Package-specific rules, each about one package whose layout the general ones cannot know.
 * @type {Record<string, (dir: string) => string[]>}
 */
const SPECIFIC = {
  // a compiled addon: its C sources, the SQLite amalgamation and the object files stay in the build stage
  'better-sqlite3': (dir) => [
    ...list(dir).filter((n) => !['build', 'lib', 'package.json', 'LICENSE'].includes(n)),
    ...list(path.join(dir, 'build'))
      .filter((n) => n !== 'Release')
      .map((n) => `build/${n}`),
    ...list(path.join(dir, 'build', 'Release'))
      .filter((n) => n !== 'better_sqlite3.node')
      .map((n) => `build/Release/${n}`),
  ],
  // mediagate counts with o200k_base only ('gpt-tokenizer', imported as ESM and required by the
  // counting thread as CommonJS: both builds stay); the UMD bundles, sources and the other encodings go
  'gpt-tokenizer': () => [
    'dist',
    'src',
    'data',
    ...['cjs', 'esm'].flatMap((build) => [
      ...['cl100k_base', 'p50k_base', 'r50k_base'].map((e) => `${build}/bpeRanks/${e}.js`),
      ...['cl100k_base', 'p50k_base', 'p50k_edit', 'r50k_base'].map((e) => `${build}/encoding/${e}.js`),
      `${build}/model`,
      `${build}/codegen`,
      `${build}/fixtures`,
    ]),
  ],
};

/**
 * The names in a folder (none when it does not exist).
 * @param {string} dir
 * @returns {string[]}
 */
function list(dir) {
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/**
 * The bytes of a file, or of everything under a folder.
 * @param {string} p
 * @returns {number}
 */
function size(p) {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const n of fs.readdirSync(p)) total += size(path.join(p, n));
  return total;
}

/**
 * Every path `exports` can resolve to for Node (first matching condition of each object, per environment).
 * @param {unknown} exp a package.json's `exports`, or a part of it
 * @param {string[]} conditions
 * @param {unknown[]} out the paths found so far
 */
function exportTargets(exp, conditions, out) {
  if (typeof exp === 'string') out.push(exp);
  else if (Array.isArray(exp)) for (const e of exp) exportTargets(e, conditions, out);
  else if (exp && typeof exp === 'object') {
    const keys = Object.keys(exp);
    if (keys.some((k) => k.startsWith('.'))) for (const k of keys) exportTargets(/** @type {Record<string, unknown>} */ (exp)[k], conditions, out);
    else {
      const hit = keys.find((k) => conditions.includes(k));
      if (hit) exportTargets(/** @type {Record<string, unknown>} */ (exp)[hit], conditions, out);
    }
  }
  return out;
}

/**
 * The paths (relative to the package) Node can load as an entry: main, bin and exports targets.
 * @param {{ main?: unknown, bin?: unknown, exports?: unknown }} pkg a package.json, as read (nothing in it checked)
 */
function entries(pkg) {
  const paths = [pkg.main ?? 'index.js'];
  if (typeof pkg.bin === 'string') paths.push(pkg.bin);
  else if (pkg.bin) paths.push(...Object.values(pkg.bin));
  if (pkg.exports !== undefined) for (const env of ENVIRONMENTS) exportTargets(pkg.exports, env, paths);
  return paths.map((p) => path.posix.normalize(String(p)).replace(/^\.\//, ''));
}

/**
 * Whether an entry path is in `folder` (or an `exports` pattern starts there).
 * @param {string[]} entryPaths
 * @param {string} folder
 */
function reached(entryPaths, folder) {
  return entryPaths.some((p) => p === folder || p.startsWith(`${folder}/`) || p.startsWith(`${folder.replace(/\/$/, '')}/*`));
}

/**
 * What to remove from one package folder, by rule (paths relative to the folder).
 * @param {string} dir
 * @param {string} name the package's name
 */
export function prunePlan(dir, name) {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entryPaths = entries(pkg);
  const specific = SPECIFIC[name];
  const own = specific ? specific(dir).filter((p) => fs.existsSync(path.join(dir, p))) : [];
  const builds = OTHER_BUILDS.filter((f) => fs.existsSync(path.join(dir, f)) && !reached(entryPaths, f));
  const notRun = [...NOT_RUN, ...list(dir).filter((n) => n.startsWith('.'))].filter(
    (f) => fs.statSync(path.join(dir, f), { throwIfNoEntry: false })?.isDirectory() && !reached(entryPaths, f),
  );
  /** @type {string[]} */
  const files = [];
  const gone = [...own, ...builds, ...notRun];
  /** @param {string} rel */
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (gone.includes(p) || e.name === 'node_modules') continue;
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && NOT_READ.test(e.name) && !LICENSE.test(e.name) && !entryPaths.includes(p)) files.push(p);
    }
  };
  walk('');
  return { 'package specific': own, 'other module builds': builds, 'tests, examples, docs': notRun, 'maps, declarations, sources, docs': files };
}

/**
 * Every package folder under a node_modules folder (scoped ones and nested node_modules included).
 * @param {string} nodeModules
 * @returns {Array<{ name: string, dir: string }>}
 */
export function packages(nodeModules) {
  /** @type {Array<{ name: string, dir: string }>} */
  const found = [];
  for (const n of list(nodeModules)) {
    if (n.startsWith('.')) continue;
    const names = n.startsWith('@') ? list(path.join(nodeModules, n)).map((m) => `${n}/${m}`) : [n];
    for (const name of names) {
      const dir = path.join(nodeModules, name);
      if (!fs.existsSync(path.join(dir, 'package.json')) || fs.lstatSync(dir).isSymbolicLink()) continue;
      found.push({ name, dir });
      found.push(...packages(path.join(dir, 'node_modules')));
    }
  }
  return found;
}

/**
 * Removes what the plan of every package names; returns the bytes removed by rule.
 * @param {string} nodeModules
 */
export function prune(nodeModules) {
  /** @type {Record<string, number>} */
  const removed = {};
  for (const { name, dir } of packages(nodeModules)) {
    for (const [rule, paths] of Object.entries(prunePlan(dir, name))) {
      for (const p of paths) {
        const full = path.join(dir, p);
        if (!fs.existsSync(full)) continue;
        removed[rule] = (removed[rule] ?? 0) + size(full);
        fs.rmSync(full, { recursive: true, force: true });
      }
    }
  }
  return removed;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const dir = process.argv[2];
  if (!dir || !fs.existsSync(dir)) {
    console.error('usage: node scripts/image-prune.js NODE_MODULES');
    process.exit(2);
  }
  const before = size(dir);
  const removed = prune(dir);
  for (const [rule, bytes] of Object.entries(removed)) console.log(`image-prune: ${rule}: ${(bytes / 1e6).toFixed(1)} MB`);
  console.log(`image-prune: node_modules ${(before / 1e6).toFixed(1)} MB -> ${(size(dir) / 1e6).toFixed(1)} MB`);
}
