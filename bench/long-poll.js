// Long-poll benchmark (run by hand: `node bin/mediagate.js build && node bench/long-poll.js`; never
// part of the tests). Target (issue 6): with 1,000 long-poll waiters (`?wait=60`) held open, 100
// active pollers (autocannon, plain polls) keep p99 < 20 ms; memory per waiter reported.
//
// It starts bench/gateway-server.js (workers off, rate limits off), creates 10 more keys with the
// CLI (a key may hold at most 100 waiters), submits 100 tasks per key (they stay queued), then:
//   1. polls one task with 100 connections for BENCH_DURATION s (no waiters: the baseline);
//   2. opens 1,000 waiters (one per task, each its own connection), measures the server's RSS and
//      heap before and after, and polls again for BENCH_DURATION s while they wait.
// Writes the `bench:longpoll` section of docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
import { writeDocSection } from './doc-section.js';
import { spawn, spawnSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WAITERS = Number(process.env.BENCH_WAITERS ?? 1000);
const POLLERS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
const KEYS = Math.ceil(WAITERS / 100);

const child = spawn(process.execPath, [path.join(here, 'gateway-server.js')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => child.kill('SIGKILL'));
/** @type {import('./gateway-server.js').StartupLine} */
const info = await new Promise((resolve, reject) => {
  readline.createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line)));
  child.once('exit', (code) => reject(new Error(`gateway-server exited (${code})`)));
});
const base = `http://127.0.0.1:${info.port}`;

/** The server's resident memory, MiB (Linux /proc). */
function rssMiB() {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kiB = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  if (kiB === undefined) throw new Error(`no VmRSS line in /proc/${child.pid}/status`);
  return Number(kiB) / 1024;
}

const keys = [];
for (let i = 0; i < KEYS; i++) {
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'keys', 'create', '--name', `waiter-${i}`], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MEDIAGATE_DATA_DIR: info.dataDir },
  });
  keys.push(r.stdout.trim().split('\n').pop());
}
const agent = new Agent({ connections: WAITERS + 10, keepAliveTimeout: 120_000, headersTimeout: 0, bodyTimeout: 0 });
const tasks = [];
for (const key of keys) {
  for (let i = 0; i < WAITERS / KEYS; i++) {
    const res = await request(`${base}/v1/pic/images`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pic', prompt: `waiter ${i}` }),
    });
    const created = /** @type {{ id?: unknown } | null} */ (await res.body.json());
    if (res.statusCode !== 200 || typeof created?.id !== 'string') throw new Error(`task create answered ${res.statusCode}: ${JSON.stringify(created)}`);
    tasks.push({ key, id: created.id });
  }
}

/**
 * One autocannon run polling the gateway's own task.
 * @returns {Promise<import('autocannon').Result>}
 */
function poll() {
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `${base}/v1/result/${info.taskId}`,
        connections: POLLERS,
        duration: DURATION,
        headers: { authorization: `Bearer ${info.key}` },
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
}

await poll(); // warm-up (the same length)
const baseline = await poll();
const rssBefore = rssMiB();
const aborts = new AbortController();
setMaxListeners(WAITERS + 10, aborts.signal);
let answeredEarly = 0;
const waiting = tasks.map(({ key, id }) =>
  request(`${base}/v1/result/${id}?wait=60`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${key}` },
    signal: aborts.signal,
  }).then(
    async (res) => {
      await res.body.text();
      answeredEarly++;
    },
    () => undefined,
  ),
);
await new Promise((r) => setTimeout(r, 3000));
const rssWaiting = rssMiB();
const loaded = await poll();
const stillWaiting = WAITERS - answeredEarly;
aborts.abort();
await Promise.all(waiting);
child.kill('SIGTERM');

const perWaiterKiB = ((rssWaiting - rssBefore) * 1024) / WAITERS;
/** @param {boolean} ok */
const met = (ok) => (ok ? '**met**' : '**MISSED**');
/** @param {string} name @param {import('autocannon').Result} r */
const row = (name, r) => `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.latency.max} | ${r.errors} | ${r.non2xx} |`;
const section = [
  '## Long-poll waiters beside active pollers',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.cpus().length}; Node ${process.version}. The gateway (\`bench/gateway-server.js\`, workers off, rate limits off) holds ${stillWaiting} of ${WAITERS} long-poll requests (\`GET /v1/result/{id}?wait=60\`, each its own connection and its own queued task, ${KEYS} keys) while autocannon polls one task with ${POLLERS} connections for ${DURATION} s; the same poll run without waiters is the baseline. Client and server share the machine.`,
  '',
  '| Run | Requests/s | p50 ms | p99 ms | max ms | Errors | Non-2xx |',
  '|---|---:|---:|---:|---:|---:|---:|',
  row('polls, no waiters', baseline),
  row(`polls, ${stillWaiting} waiters held`, loaded),
  '',
  `Server memory: RSS ${rssBefore.toFixed(1)} MiB before the waiters, ${rssWaiting.toFixed(1)} MiB with them: **${perWaiterKiB.toFixed(1)} KiB per waiter** (its socket, request and reply objects and the waiter entry; the waiter entry itself is a map entry and a timer).`,
  '',
  '| Target | Measured | Result |',
  '|---|---:|---|',
  `| active pollers' p99 < 20 ms with ${WAITERS} waiters | ${loaded.latency.p99} ms | ${met(loaded.latency.p99 < 20 && stillWaiting === WAITERS)} |`,
].join('\n');
console.log(section);
if (!NO_WRITE) {
  writeDocSection('longpoll', section);
}
await agent.close().catch(() => undefined);
process.exit(0);
