// Start time and idle memory of the gateway as `npm start` runs it (run by hand after `npm run build`:
// `node bench/start.js`; never part of the tests).
//
// Each round starts the built gateway with the default configuration on SQLite (a fresh data
// directory, a free port on 127.0.0.1, nothing else set) two ways: `npm start` (the npm CLI's own
// start-up included) and `node bin/mediagate.js serve` (what npm runs). It polls GET /healthz every
// 10 ms from the spawn on and records when it first answers 200; then it leaves the gateway idle for
// BENCH_IDLE seconds and reads the gateway process's resident memory (VmRSS, /proc). The report gives
// the median and range of BENCH_ROUNDS rounds and writes the `bench:start` section of
// docs/BENCHMARKS.md (BENCH_NO_WRITE=1 only prints it).
//
// BENCH_START_BEFORE=DIR also measures the checkout in DIR (an older commit with its node_modules,
// e.g. `git archive <commit> | tar -x -C DIR` and a symlink to this node_modules) for a before/after
// comparison: each round starts both checkouts in turn, so they share the machine's load alike.
//
// Goals (issue 24): /healthz answers within 1 s of `npm start`, and the idle gateway holds under 110 MB.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { writeDocSection } from './doc-section.js';
import { intEnv, loadAverage, machine, machineBusy, median, root, verdict } from './harness.js';

const ROUNDS = intEnv('BENCH_ROUNDS', 7);
const IDLE_S = intEnv('BENCH_IDLE', 10);
const BEFORE = process.env.BENCH_START_BEFORE ? path.resolve(process.env.BENCH_START_BEFORE) : undefined;
const TIME_GOAL_MS = 1000;
const RSS_GOAL_MB = 110;

/**
 * A port free right now on 127.0.0.1.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The pids of `pid`'s process tree (Linux /proc), `pid` first.
 * @param {number} pid
 */
function processTree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    for (const task of fs.readdirSync(`/proc/${out[i]}/task`)) {
      let children = '';
      try {
        children = fs.readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8');
      } catch {
        /* gone */
      }
      for (const c of children.trim().split(/\s+/).filter(Boolean)) out.push(Number(c));
    }
  }
  return out;
}

/**
 * The resident memory of a process, MB (MiB), or undefined when it is gone.
 * @param {number} pid
 */
function rssMb(pid) {
  try {
    const kiB = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kiB === undefined ? undefined : Number(kiB) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * The gateway's node process in `root`'s tree: the one whose command line runs bin/mediagate.js.
 * @param {number} rootPid
 */
function gatewayPid(rootPid) {
  for (const pid of processTree(rootPid)) {
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('bin/mediagate.js') && !cmd.startsWith('npm')) {
      const argv = cmd.split('\0');
      if (path.basename(argv[0] ?? '') === 'node' || argv[0] === process.execPath) return pid;
    }
  }
  throw new Error(`no gateway process under pid ${rootPid}`);
}

/**
 * One start: spawn, time to the first 200 from /healthz, idle RSS, stop.
 * @param {string} dir the checkout
 * @param {'npm' | 'node'} how
 */
async function oneStart(dir, how) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-bench-start-'));
  /** @type {NodeJS.ProcessEnv} */
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', MEDIAGATE_DATA_DIR: dataDir };
  for (const k of Object.keys(env)) if (k.startsWith('MEDIAGATE_') && k !== 'MEDIAGATE_DATA_DIR') delete env[k];
  const [cmd, args] = how === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, ['bin/mediagate.js', 'serve']];
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    try {
      process.kill(-(/** @type {number} */ (child.pid)), 'SIGTERM');
    } catch {
      /* gone */
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-(/** @type {number} */ (child.pid)), 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    let readyMs;
    while (readyMs === undefined) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the gateway exited before answering: ${stderr}`);
      if (performance.now() - t0 > 30_000) throw new Error(`no answer from /healthz within 30 s: ${stderr}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.status === 200) readyMs = performance.now() - t0;
      } catch {
        /* not listening yet */
      }
      if (readyMs === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    const pid = gatewayPid(/** @type {number} */ (child.pid));
    const readyRss = rssMb(pid);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idleRss = rssMb(pid);
    if (idleRss === undefined || readyRss === undefined) throw new Error('the gateway exited while idle');
    return { readyMs, readyRss, idleRss };
  } finally {
    await stop();
  }
}

/** @typedef {{ readyMs: number, readyRss: number, idleRss: number }} Start */
/** The checkouts measured: this one, and the one of BENCH_START_BEFORE. */
const checkouts = [...(BEFORE ? [{ name: `before (${path.basename(BEFORE)})`, dir: BEFORE }] : []), { name: BEFORE ? 'now' : '', dir: root }];
// a stale dist/ would be rebuilt by the first start, inside its time
for (const c of checkouts) execFileSync(process.execPath, ['bin/mediagate.js', 'build'], { cwd: c.dir, stdio: ['ignore', 'ignore', 'inherit'] });
const m = machine();
const otherCores = await machineBusy(2000);
process.stderr.write(
  `start: ${ROUNDS} rounds (npm start, then node bin/mediagate.js serve), ${IDLE_S} s idle each; other processes use ${otherCores.toFixed(2)} cores\n`,
);
/** @type {Map<string, Record<'npm' | 'node', Start[]>>} */
const runs = new Map(checkouts.map((c) => [c.name, { npm: [], node: [] }]));
for (let i = 0; i < ROUNDS; i++) {
  for (const c of checkouts) {
    for (const how of /** @type {const} */ (['npm', 'node'])) {
      const r = await oneStart(c.dir, how);
      runs.get(c.name)?.[how].push(r);
      process.stderr.write(
        `  round ${i + 1} ${c.name} ${how}: /healthz after ${r.readyMs.toFixed(0)} ms, RSS ${r.readyRss.toFixed(1)} MB then ${r.idleRss.toFixed(1)} MB idle\n`,
      );
    }
  }
}
const loadAfter = loadAverage();

/** @param {number[]} xs @param {(n: number) => string} f */
const stat = (xs, f) => `${f(median(xs))} (${f(Math.min(...xs))}-${f(Math.max(...xs))})`;
/** @param {number} n */
const ms = (n) => `${Math.round(n)}`;
/** @param {number} n */
const mb = (n) => n.toFixed(1);
const rows = checkouts.flatMap((c) =>
  /** @type {const} */ (['npm', 'node']).map((how) => {
    const r = runs.get(c.name)?.[how] ?? [];
    const label = `${c.name ? `${c.name}: ` : ''}${how === 'npm' ? '`npm start`' : '`node bin/mediagate.js serve`'}`;
    return `| ${label} | ${stat(
      r.map((x) => x.readyMs),
      ms,
    )} | ${stat(
      r.map((x) => x.readyRss),
      mb,
    )} | ${stat(
      r.map((x) => x.idleRss),
      mb,
    )} |`;
  }),
);
const now = runs.get(checkouts.at(-1)?.name ?? '')?.npm ?? [];
const npmReady = median(now.map((x) => x.readyMs));
const idle = median(now.map((x) => x.idleRss));
const text = [
  '## Start time and idle memory',
  '',
  `Run ${m.date}; \`nproc\` ${m.nproc} (${m.cpu}); Node ${m.node}; built gateway, default configuration on SQLite (fresh data directory, nothing else set). ${ROUNDS} rounds, each starting it with \`npm start\` and then with \`node bin/mediagate.js serve\`${BEFORE ? ', the checkout before these changes and then this one' : ''}; /healthz polled every 10 ms from the spawn on; RSS of the gateway process when /healthz first answered and after ${IDLE_S} s idle. Median (min-max). Other processes used ${otherCores.toFixed(2)} cores just before the run; 1-minute load average ${m.loadBefore} before, ${loadAfter} after (the machine is shared: other work shows as noise, in the times far more than in the memory).`,
  '',
  '| Started with | /healthz answers after, ms | RSS then, MB | RSS idle, MB |',
  '|---|---:|---:|---:|',
  ...rows,
  '',
  '| Target | Measured (median, `npm start`) | Result |',
  '|---|---:|---|',
  `| /healthz within ${TIME_GOAL_MS} ms of \`npm start\` | ${ms(npmReady)} ms | ${verdict(npmReady <= TIME_GOAL_MS)} |`,
  `| idle RSS under ${RSS_GOAL_MB} MB | ${mb(idle)} MB | ${verdict(idle < RSS_GOAL_MB)} |`,
].join('\n');
console.log(text);
if (process.env.BENCH_NO_WRITE !== '1') writeDocSection('start', text);
