/**
 * Which packages a gateway process loads (G295-G299): a spawned `node` registers an ESM loader hook
 * (every specifier it resolves, on the hooks thread, posted back) before it runs the built CLI's
 * `serve` (dist/main/cli.js, what `npm start` runs; or another command: `args`) with the given environment on a free port,
 * optionally runs `then` (code
 * with `url` and `key` in scope, e.g. a request; what it returns is reported), and prints the packages of every module resolved
 * through ESM or required through CommonJS on the main thread, and the gateway's own modules (paths under dist/).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './process.js';

const HOOKS = `
let port;
export async function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  port.postMessage(found.url);
  return found;
}`;

const PROBE = `
import { createRequire, register } from 'node:module';
import net from 'node:net';
import { MessageChannel } from 'node:worker_threads';
const resolved = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => resolved.add(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent(process.env.PROBE_HOOKS), { data: { port: port2 }, transferList: [port2] });
const port = await new Promise((resolve) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
});
process.env.PORT = String(port);
process.argv = [process.argv[0], process.argv[1], ...JSON.parse(process.env.PROBE_ARGS)];
let error;
let result;
// the CLI ends a start that failed for a fault of the system with one line and exit 1 (G458, G472):
// taken here as the start's error, so the probe still reports what was loaded
const exit = process.exit.bind(process);
process.exit = (code) => { throw new Error('mediagate exited with ' + code); };
try {
  await import(process.env.PROBE_CLI); // returns once the server listens
  const url = 'http://127.0.0.1:' + port;
  const key = process.env.MEDIAGATE_BOOTSTRAP_KEY;
  result = await (async () => { /*THEN*/ })();
} catch (err) {
  error = String(err && err.message || err);
}
await new Promise((r) => setTimeout(r, 50)); // the last resolutions' messages
const files = [...resolved, ...Object.keys(createRequire(import.meta.url).cache)];
const packages = new Set();
for (const f of files) {
  const m = /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(f);
  if (m) packages.add(m[1].replace('\\\\', '/'));
}
const dist = 'file://' + process.env.PROBE_DIST;
const modules = [...resolved].filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length)).sort();
process.stdout.write(JSON.stringify({ packages: [...packages].sort(), modules, error, result }) + '\\n');
exit(0);
`;

export interface LoadedPackages {
  packages: string[];
  /** The gateway's own modules it loaded, as paths under dist/ (`main/cli.js`). */
  modules: string[];
  /** The start's (or `then`'s) error, when it failed (a store that is not there). */
  error?: string;
  /** What `then` returned (JSON). */
  result?: unknown;
}

/**
 * Starts the built gateway in a child process with `env` (over a fresh data directory's defaults)
 * and reports what it loaded; `args`: another CLI command than `serve` (run to its end; `then` is run after it).
 */
export function loadedPackages(env: Record<string, string>, then = '', args = ['serve']): Promise<LoadedPackages> {
  // a file, not `--input-type=module -e`: worker threads inherit that flag, and the gateway's run CommonJS
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-probe-')), 'probe.mjs');
  fs.writeFileSync(probe, PROBE.replace('/*THEN*/', then));
  const child = spawn(process.execPath, [probe], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      // the run's own temporary folder: its scratch files land there, and the run's end finds it if it is left running (G475)
      ...(process.env.TMPDIR !== undefined && { TMPDIR: process.env.TMPDIR }),
      HOST: '127.0.0.1',
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      ...env,
      PROBE_HOOKS: HOOKS,
      PROBE_CLI: path.join(ROOT, 'dist', 'main', 'cli.js'),
      PROBE_DIST: `${path.join(ROOT, 'dist')}/`,
      PROBE_ARGS: JSON.stringify(args),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      fs.rmSync(path.dirname(probe), { recursive: true, force: true });
      const line = out.trim().split('\n').at(-1) ?? '';
      if (status !== 0 || !line.startsWith('{')) reject(new Error(`the probe failed (${status}): ${err}${out}`));
      else resolve(JSON.parse(line) as LoadedPackages);
    });
  });
}
