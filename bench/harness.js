// What the HTTP benchmarks share (bench/run.js, bench/table-size.js): child processes (the servers
// under test), CPU accounting from /proc, waiting for a quiet machine, autocannon, report formatting.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The checkout (the children run there). */
export const root = path.dirname(here);

/**
 * A numeric setting from the environment.
 * @param {string} name
 * @param {number} fallback
 * @param {number} [min]
 */
export function intEnv(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}

/** Before each measured run, wait up to this many seconds for other processes to go quiet (0: do not wait). */
const QUIET_WAIT = intEnv('BENCH_QUIET_WAIT', 60, 0);
/** Cores used by other processes during a run above which the report flags that run as disturbed. */
export const NOISE_CORES = 0.25;

// ---------------------------------------------------------------------------------------------
// Child processes

/**
 * Every child started, so they can be killed on any exit path.
 * @type {Set<import('node:child_process').ChildProcess>}
 */
const children = new Set();

/** @param {NodeJS.Signals} [signal] */
function killChildren(signal = 'SIGTERM') {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }
}

/**
 * Asynchronous clean-ups (a benchmark database to drop), run by cleanUp() after the children are stopped.
 * @type {Set<() => Promise<unknown>>}
 */
const cleanups = new Set();

/**
 * Has `fn` run by cleanUp() (at the end of the benchmark, however it ends, and on SIGINT/SIGTERM);
 * the returned function unregisters it (call it once `fn` has run by other means).
 * @param {() => Promise<unknown>} fn
 * @returns {() => void}
 */
export function onCleanUp(fn) {
  cleanups.add(fn);
  return () => {
    cleanups.delete(fn);
  };
}

/** Stops every child (SIGKILL after 3 s), then runs the registered clean-ups, last first; call it in the benchmark's `finally`. */
export async function cleanUp() {
  await Promise.allSettled([...children].map((child) => stopChild(child, 3000)));
  killChildren('SIGKILL');
  // last registered first (a connection to a database is closed before the database is dropped)
  for (const fn of [...cleanups].reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error('bench: clean-up failed:', err);
    }
  }
}

process.on('exit', () => killChildren('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    cleanUp().finally(() => process.exit(130));
  });
}

/**
 * Starts `script` with node and resolves with the JSON object it prints on its first stdout line
 * (with `logFile`: stdout goes to that file and the startup line comes on descriptor 3): `{"port":N}`,
 * and from the gateway also its key, task id and data directory.
 * @param {string} script
 * @param {{ nodeArgs?: string[], env?: NodeJS.ProcessEnv, timeoutMs?: number, logFile?: string, pin?: boolean }} [options] `pin`: on core 1 (taskset)
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, info: { port: number } & Partial<import('./gateway-server.js').StartupLine> }>}
 */
export function startChild(script, { nodeArgs = [], env = process.env, timeoutMs = 30_000, logFile, pin = false } = {}) {
  const argv = [...nodeArgs, path.join(here, script)];
  /** @type {import('node:child_process').StdioOptions} */
  const stdio = logFile ? ['ignore', fs.openSync(logFile, 'a'), 'inherit', 'pipe'] : ['ignore', 'pipe', 'inherit'];
  const child = pin
    ? spawn('taskset', ['-c', '1', process.execPath, ...argv], { cwd: root, env, stdio })
    : spawn(process.execPath, argv, { cwd: root, env, stdio });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const input = logFile ? child.stdio[3] : child.stdout;
  if (!(input instanceof Readable)) throw new Error(`${script}: no pipe to read the startup line from`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script}: no startup line within ${timeoutMs} ms`)), timeoutMs);
    const lines = readline.createInterface({ input });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve({ child, info: JSON.parse(line) });
      } catch {
        reject(new Error(`${script}: unexpected startup line ${JSON.stringify(line)}`));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
}

/**
 * SIGTERM, then wait (SIGKILL after `graceMs`).
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} [graceMs]
 * @returns {Promise<void>}
 */
export function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every child still running (SIGKILL after `graceMs`). */
export function stopChildren(graceMs = 10_000) {
  return Promise.all([...children].map((child) => stopChild(child, graceMs)));
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): how much of the machine the server under test, the load generator
// (this process) and everything else used during a run, in cores. "Everything else" is noise: on a
// 2-core machine any other busy process directly lowers the measured throughput.

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* default */
}

/**
 * CPU time of process `pid` so far (user + system), in clock ticks.
 * @param {number | string} pid
 */
function procTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15 of the whole line)
}

/**
 * Busy time of the whole machine since boot, in clock ticks: user + nice + system + irq + softirq +
 * steal from the first (`cpu`) line of /proc/stat. Throws where there is no such line (not Linux).
 */
function machineTicks() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  if (user === undefined || nice === undefined || system === undefined || irq === undefined || softirq === undefined || steal === undefined) {
    throw new Error(`/proc/stat: unexpected first line ${JSON.stringify(line)}`);
  }
  return user + nice + system + irq + softirq + steal;
}

/** CPU ticks of every `postgres` process now running, by pid (the database server's share of a run). */
function databaseTicks() {
  /** @type {Map<number, number>} */
  const ticks = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') ticks.set(Number(entry), procTicks(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks;
}

/**
 * The CPU counters of the machine, the server, this process and PostgreSQL now (undefined where there is no /proc).
 * @param {number} serverPid
 */
export function cpuSnapshot(serverPid) {
  try {
    return {
      at: process.hrtime.bigint(),
      busy: machineTicks(),
      server: procTicks(serverPid),
      self: serverPid === process.pid ? 0 : procTicks(process.pid),
      database: databaseTicks(),
    };
  } catch {
    return undefined; // not Linux
  }
}

/** @typedef {NonNullable<ReturnType<typeof cpuSnapshot>>} CpuSnapshot */

/**
 * The cores each used between two snapshots (undefined when either is missing).
 * @param {CpuSnapshot | undefined} a
 * @param {CpuSnapshot | undefined} b
 */
export function cpuDelta(a, b) {
  if (!a || !b) return undefined;
  const secs = Number(b.at - a.at) / 1e9;
  const cores = (/** @type {number} */ ticks) => ticks / clockTicks / secs;
  const server = cores(b.server - a.server);
  const loadgen = cores(b.self - a.self);
  // PostgreSQL processes alive at the end: all the ticks of those started during the run (a pool
  // may open connections then); one that exited during the run is counted as "other"
  let dbTicks = 0;
  for (const [pid, t] of b.database) dbTicks += t - (a.database.get(pid) ?? 0);
  const database = cores(dbTicks);
  return { secs, server, loadgen, database, other: Math.max(0, cores(b.busy - a.busy) - server - loadgen - database) };
}

/** Busy cores of the whole machine over `ms` (our servers are idle then, so this is other work). */
export async function machineBusy(ms = 1000) {
  const self0 = procTicks(process.pid);
  const a = machineTicks();
  await new Promise((r) => setTimeout(r, ms));
  return Math.max(0, (machineTicks() - a - (procTicks(process.pid) - self0)) / clockTicks / (ms / 1000));
}

/**
 * Waits (up to QUIET_WAIT s) until other processes use less than NOISE_CORES; returns the seconds waited.
 * @param {string} label what is about to run (for the messages)
 */
export async function waitForQuiet(label) {
  if (QUIET_WAIT <= 0) return 0;
  const start = Date.now();
  let busy;
  try {
    busy = await machineBusy();
  } catch {
    return 0;
  }
  let told = false;
  while (busy >= NOISE_CORES && Date.now() - start < QUIET_WAIT * 1000) {
    if (!told) {
      process.stderr.write(`  ${label}: other processes busy (${busy.toFixed(2)} cores); waiting up to ${QUIET_WAIT} s for a quiet machine\n`);
      told = true;
    }
    busy = await machineBusy();
  }
  if (busy >= NOISE_CORES) process.stderr.write(`  ${label}: still busy (${busy.toFixed(2)} cores); running anyway\n`);
  return (Date.now() - start) / 1000;
}

// ---------------------------------------------------------------------------------------------
// HTTP load and reports

/**
 * One autocannon run (pipelining 1).
 * @param {import('autocannon').Options} opts
 * @returns {Promise<import('autocannon').Result>}
 */
export function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ pipelining: 1, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/**
 * Fetches `url` once and throws unless it answers 2xx; resolves with the reply's size in bytes.
 * @param {string} url
 * @param {RequestInit} [init]
 */
export async function probe(url, init) {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${init?.method ?? 'GET'} ${url} answered ${res.status}: ${text}`);
  return Buffer.byteLength(text);
}

/**
 * The median of `xs` (NaN when empty).
 * @param {number[]} xs
 * @returns {number}
 */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  // (an empty list: undefined + undefined, NaN)
  // biome-ignore format: the formatter would move the first cast's comment out of the parentheses (casting the sum, not s[mid - 1])
  return s.length % 2 ? /** @type {number} */ (s[mid]) : (/** @type {number} */ (s[mid - 1]) + /** @type {number} */ (s[mid])) / 2;
};

/** The 1-minute load average, 2 decimals (os.loadavg() always has three entries). */
export const loadAverage = () => /** @type {number} */ (os.loadavg()[0]).toFixed(2);
/** @param {number} n */
export const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
/** @param {number | null | undefined} n milliseconds */
export const fmtMs = (n) => (n === undefined || n === null ? 'n/a' : Number.isInteger(n) ? `${n}` : n.toFixed(1));
/** @param {boolean} ok */
export const verdict = (ok) => (ok ? '**met**' : '**MISSED**');

/** The machine and the run's start, for a report's first line. */
export function machine() {
  let nproc = String(os.availableParallelism?.() ?? os.cpus().length);
  try {
    nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    /* keep the os figure */
  }
  return {
    nproc,
    node: process.version,
    cpu: os.cpus()[0]?.model?.trim() ?? 'unknown',
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadBefore: loadAverage(),
  };
}

/**
 * The machine (machine()), and what a benchmark adds to it for its report: the PostgreSQL server's
 * version and the load average after the run.
 * @typedef {ReturnType<typeof machine> & { postgres?: string, loadAfter?: string }} Machine
 */

/**
 * One measured autocannon run against `server` (after waiting for a quiet machine), with the CPU
 * the server, the load generator, PostgreSQL and everything else used meanwhile.
 * @param {string} name
 * @param {import('node:child_process').ChildProcess} server
 * @param {import('autocannon').Options & { duration: number, connections: number }} opts
 */
export async function measureLoad(name, server, opts) {
  if (server.pid === undefined) throw new Error(`${name}: the server has no pid`);
  process.stderr.write(`${name}: ${opts.duration} s at ${opts.connections} connections\n`);
  await waitForQuiet(name);
  const before = cpuSnapshot(server.pid);
  const r = await cannon(opts);
  const cpu = cpuDelta(before, cpuSnapshot(server.pid));
  const row = {
    name,
    rps: r.requests.mean,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    total: r.requests.total,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    cpu,
    // Server CPU time per answered request: unlike requests/s it barely moves when the load
    // generator or other processes take CPU away from the server.
    cpuUsPerReq: cpu && r.requests.total > 0 ? (cpu.server * cpu.secs * 1e6) / r.requests.total : undefined,
  };
  process.stderr.write(
    `  ${Math.round(r.requests.mean)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, errors ${r.errors}, non-2xx ${r.non2xx}` +
      (cpu
        ? `; CPU cores: server ${cpu.server.toFixed(2)}, load generator ${cpu.loadgen.toFixed(2)}, PostgreSQL ${cpu.database.toFixed(2)}, other processes ${cpu.other.toFixed(2)}; ` +
          `server CPU ${row.cpuUsPerReq?.toFixed(0)} us/request`
        : '') +
      '\n',
  );
  return row;
}
