// Helpers shared by the caller-media benchmarks (bench/media-memory.js, bench/review-fairness.js):
// the gateway as a child process (bench/gateway-server.js), its memory from /proc, extra API keys
// through the CLI, a loopback media server, and the marked sections of docs/BENCHMARKS.md.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.dirname(here);

/**
 * @typedef {object} GatewayChild
 * @property {import('node:child_process').ChildProcess} child
 * @property {import('./gateway-server.js').StartupLine} info
 * @property {string} base the gateway's origin, `http://127.0.0.1:PORT`
 * @property {() => Promise<void>} stop
 */

/**
 * Starts bench/gateway-server.js (compiled gateway from dist/, rate limits off, loopback media
 * URLs allowed) with `env` on top of this process's environment.
 * @param {Record<string, string>} env
 * @returns {Promise<GatewayChild>}
 */
export async function startGateway(env) {
  const child = spawn(process.execPath, [path.join(here, 'gateway-server.js')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, MEDIAGATE_ALLOW_PRIVATE_URLS: '1', ...env },
  });
  process.on('exit', () => child.kill('SIGKILL'));
  const stdout = child.stdout;
  if (stdout === null) throw new Error('gateway-server: no stdout pipe');
  /** @type {import('./gateway-server.js').StartupLine} */
  const info = await new Promise((resolve, reject) => {
    readline.createInterface({ input: stdout }).once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`gateway-server exited (${code})`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) {
        resolve(undefined);
        return;
      }
      child.once('exit', () => resolve(undefined));
      child.kill('SIGTERM');
    }).then(() => undefined);
  return { child, info, base: `http://127.0.0.1:${info.port}`, stop };
}

/**
 * One `kB` field of /proc/PID/status (VmRSS, VmHWM), in MiB.
 * @param {number} pid
 * @param {'VmRSS' | 'VmHWM'} field
 */
export function procMiB(pid, field) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kiB = new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1];
  if (kiB === undefined) throw new Error(`no ${field} line in /proc/${pid}/status`);
  return Number(kiB) / 1024;
}

/**
 * Resets the kernel's peak-RSS mark (VmHWM) of `pid` (Linux: `echo 5 > /proc/PID/clear_refs`);
 * false when the kernel does not allow it (the sampled peak is used alone then).
 * @param {number} pid
 */
export function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Samples the RSS of `pid` every `everyMs` until `stop()`; answers the highest sample.
 * @param {number} pid
 * @param {number} everyMs
 */
export function sampleRss(pid, everyMs = 20) {
  let peak = procMiB(pid, 'VmRSS');
  let samples = 1;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, procMiB(pid, 'VmRSS'));
      samples++;
    } catch {
      /* the process is gone */
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak, samples };
    },
  };
}

/**
 * A new API key in the gateway's data directory (the CLI writes the same SQLite file).
 * @param {string} dataDir
 * @param {string} name
 */
export function createKey(dataDir, name) {
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'keys', 'create', '--name', name], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MEDIAGATE_DATA_DIR: dataDir },
  });
  const key = r.stdout.trim().split('\n').pop();
  if (r.status !== 0 || !key) throw new Error(`keys create failed: ${r.stderr}`);
  return key;
}

/**
 * A loopback server for caller media: files from disk (streamed, with Content-Length), buffers,
 * and paths that answer headers and then never send a body. Counts requests per path.
 */
export async function startMediaServer() {
  /** @type {Map<string, { file?: string, body?: Buffer, type: string }>} */
  const routes = new Map();
  const stalled = new Set();
  /** @type {Map<string, number>} */
  const hits = new Map();
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0] ?? '/';
    hits.set(p, (hits.get(p) ?? 0) + 1);
    if (stalled.has(p)) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100_000 });
      res.flushHeaders();
      return;
    }
    const r = routes.get(p);
    if (!r) {
      res.writeHead(404).end('not found');
      return;
    }
    if (r.body) {
      res.writeHead(200, { 'content-type': r.type, 'content-length': r.body.length }).end(r.body);
      return;
    }
    const file = /** @type {string} */ (r.file);
    res.writeHead(200, { 'content-type': r.type, 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('media server: no TCP address');
  const url = (/** @type {string} */ p) => `http://127.0.0.1:${address.port}${p}`;
  return {
    hits,
    url,
    /** @param {string} p @param {string} file @param {string} type */
    file(p, file, type) {
      routes.set(p, { file, type });
      return url(p);
    },
    /** @param {string} p @param {Buffer} body @param {string} type */
    bytes(p, body, type) {
      routes.set(p, { body, type });
      return url(p);
    },
    /** @param {string} p */
    stall(p) {
      stalled.add(p);
      return url(p);
    },
    /** Drops every open connection (stalled fetches fail at once). */
    dropAll() {
      for (const s of sockets) s.destroy();
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/**
 * Replaces (or appends) the `<!-- NAME:start -->` ... `<!-- NAME:end -->` section of docs/BENCHMARKS.md.
 * @param {string} name e.g. `bench:media-memory`
 * @param {string} section markdown
 */
export function writeSection(name, section) {
  const file = path.join(root, 'docs', 'BENCHMARKS.md');
  const START = `<!-- ${name}:start -->`;
  const END = `<!-- ${name}:end -->`;
  let doc = fs.readFileSync(file, 'utf8');
  const block = `${START}\n${section}\n${END}`;
  const s = doc.indexOf(START);
  const e = doc.indexOf(END);
  doc = s !== -1 && e > s ? doc.slice(0, s) + block + doc.slice(e + END.length) : `${doc.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, doc);
  console.log(`wrote the ${name} section of docs/BENCHMARKS.md`);
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
