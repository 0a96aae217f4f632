#!/usr/bin/env node
// Crash safety under load (issue 6): submits a burst of tasks across every family at once,
// kill -9s the gateway in the middle of the burst, starts it again on the same data directory,
// submits the rest, and checks that every task that was answered 200 reaches `completed`: none
// lost, none stuck, none run to completion twice (from the servers' "task completed" logs).
//
//   node scripts/crash-burst.js [--tasks 300] [--concurrency 40] [--kill-after 0.4]
//
// Prints one JSON summary line last; exits 0 when every check holds, 1 otherwise.
// test/crash-burst.test.ts runs it at a size that fits CI.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const TASKS = arg('tasks', 300);
const CONCURRENCY = arg('concurrency', 40);
const KILL_AFTER = arg('kill-after', 0.4);
const DEADLINE_MS = arg('deadline-s', 240) * 1000;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-crash-burst-'));
const key = `burst_${randomBytes(18).toString('base64url')}`;
const env = {
  ...process.env, PORT: '0', HOST: '127.0.0.1', MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_BOOTSTRAP_KEY: key,
  MEDIAGATE_SANDBOX_TIMING: 'instant', MEDIAGATE_LEASE_SECONDS: '2', MEDIAGATE_LOG_LEVEL: 'info',
  MEDIAGATE_RATE_LIMIT: 'off', MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0', MEDIAGATE_WORKER_CONCURRENCY: '2',
  MEDIAGATE_MIN_FREE_DISK_MB: '0', // what it tests is crashes, not a machine short of disk
};

/** One create call per family; pic weighs most (cheap), every video family is in the mix. */
const KINDS = [
  ...Array(6).fill(['/v1/pic/images', (i) => ({ model: 'pic', prompt: `burst ${i}` })]),
  ['/reel/videos', (i) => ({ model: 'reelOa2Plus', prompt: `burst ${i}`, duration: 4 })],
  ['/v1/motion/videos', (i) => ({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: `burst ${i}` }], duration: 1 })],
  ['/v1/videos/videos', (i) => ({ model: 'videos_fast', prompt: `burst ${i}`, duration: 4 })],
  ['/v2/model-center/tasks', (i) => ({ model: 'sd_2.0_fast_discount', prompt: `burst ${i}`, duration: 4, resolution: '480p', generate_audio: false })],
  ['/clip/videos', (i) => ({ model: 'clip_3_1_fast', prompt: `burst ${i}` })],
];

function startServer() {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 120_000);
    const onData = (chunk) => {
      out += chunk.toString();
      const m = /"address":"(http:\/\/[^"]+)"/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${out}`)); });
  });
  return { child, url, exited, output: () => out };
}

/**
 * The fields of a create or result reply this script reads: `id` (most families) or
 * `data.projectId` (model-center) on create, `status` on result.
 * @typedef {{ id?: string, status?: string, data?: { projectId?: string } }} TaskReply
 */

/**
 * @param {string} url
 * @param {string} [method]
 * @param {object} [body]
 * @returns {Promise<{ status: number, json: TaskReply | null }>}
 */
async function call(url, method = 'GET', body) {
  const res = await fetch(url, {
    method, headers: { authorization: `Bearer ${key}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }), signal: AbortSignal.timeout(90_000),
  });
  return { status: res.status, json: /** @type {TaskReply | null} */ (await res.json().catch(() => null)) };
}

/** @param {TaskReply | null} json */
const idOf = (json) => json?.id ?? json?.data?.projectId;

/**
 * Submits the requests `indexes` at CONCURRENCY; records the accepted ones (id -> index).
 * @param {string} base
 * @param {number[]} indexes
 * @param {() => void} [onAccepted]
 */
async function submitAll(base, indexes, onAccepted) {
  let next = 0;
  let failed = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < indexes.length) {
      const i = /** @type {number} */ (indexes[next++]); // next < indexes.length
      const [route, body] = KINDS[i % KINDS.length];
      try {
        const r = await call(`${base}${route}`, 'POST', body(i));
        const id = idOf(r.json);
        if (r.status === 200 && id) { accepted.set(id, i); onAccepted?.(); } else failed++;
      } catch { failed++; } // the server was killed under this request: not accepted
    }
  }));
  return failed;
}

const started = Date.now();
/** @type {Map<string, number>} */
const accepted = new Map();
const first = startServer();
const firstUrl = await first.url;
let killed = false;
const all = Array.from({ length: TASKS }, (_, i) => i);
const failedBefore = await submitAll(firstUrl, all, () => {
  if (!killed && accepted.size >= TASKS * KILL_AFTER) { killed = true; first.child.kill('SIGKILL'); }
});
await first.exited;
const acceptedBeforeKill = accepted.size;

const second = startServer();
const secondUrl = await second.url;
// whatever was not accepted before the crash is submitted again after it
const done = new Set(accepted.values());
const failedAfter = await submitAll(secondUrl, all.filter((i) => !done.has(i)));

const pending = new Set(accepted.keys());
const finals = new Map();
while (pending.size > 0 && Date.now() - started < DEADLINE_MS) {
  await Promise.all([...pending].slice(0, 50).map(async (id) => {
    const r = await call(`${secondUrl}/v1/result/${id}?wait=10`);
    if (r.status === 404) { finals.set(id, 'lost'); pending.delete(id); return; }
    const status = r.json?.status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') { finals.set(id, status); pending.delete(id); }
  }));
}
second.child.kill('SIGTERM');
await second.exited;

const logs = (first.output() + second.output()).split('\n').filter((l) => l.includes('"task completed"'));
const completedIds = logs.map((l) => /"taskId":"([^"]+)"/.exec(l)?.[1]).filter(Boolean);
const twice = completedIds.length - new Set(completedIds).size;
const counts = {};
for (const s of finals.values()) counts[s] = (counts[s] ?? 0) + 1;
const summary = {
  tasks: TASKS, accepted: accepted.size, acceptedBeforeKill, refusedOrCutOff: failedBefore + failedAfter,
  finals: counts, stuck: pending.size, completedTwice: twice, seconds: Math.round((Date.now() - started) / 1000),
};
const ok = killed && acceptedBeforeKill > 0 && pending.size === 0 && (counts.completed ?? 0) === accepted.size && twice === 0;
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(JSON.stringify({ ok, ...summary }));
process.exit(ok ? 0 : 1);
