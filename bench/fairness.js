// Fair claims between keys (issue 12, item 5; run by hand after a build:
// `node bin/mediagate.js build && node bench/fairness.js`; never part of the tests).
//
// Goal: with one key holding 500 queued tasks, another key's first task starts within one task's
// run time. The gateway runs its worker (sandbox, `instant` timing, 4 tasks at once); key A submits
// 500 images, then key B submits one; B's task is watched (long-poll) until it is `processing`.
// One task's run time is measured from A's tasks: how many completed per second with 4 slots.
// Writes the `bench:fairness` section of docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { writeDocSection } from './doc-section.js';
import { startGateway } from './gateway-child.js';

const BACKLOG = Number(process.env.BENCH_FAIR_BACKLOG ?? 500);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const { child, info, base } = await startGateway({ BENCH_GATEWAY_WORKERS: '1', MEDIAGATE_WORKER_CONCURRENCY: '4' });
const created = spawnSync(process.execPath, [path.join(root, 'bin', 'mediagate.js'), 'keys', 'create', '--name', 'latecomer'], {
  cwd: root,
  encoding: 'utf8',
  env: { ...process.env, MEDIAGATE_DATA_DIR: info.dataDir },
});
const keyB = created.stdout.trim().split('\n').pop();
if (created.status !== 0 || !keyB) throw new Error(`keys create failed: ${created.stderr}`);
const agent = new Agent({ connections: 64 });

/** @param {string} key @param {string} prompt */
async function submit(key, prompt) {
  const res = await request(`${base}/v1/pic/images`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pic-2', prompt, resolution: '2k', size: '16:9' }),
  });
  const body = /** @type {{ id?: string }} */ (await res.body.json());
  if (res.statusCode !== 200 || typeof body.id !== 'string') throw new Error(`submit answered ${res.statusCode}`);
  return body.id;
}

/** @param {string} key @param {string} id */
async function status(key, id, wait = 0) {
  const res = await request(`${base}/v1/result/${id}${wait ? `?wait=${wait}` : ''}`, { dispatcher: agent, headers: { authorization: `Bearer ${key}` } });
  return /** @type {{ status: string }} */ (await res.body.json()).status;
}

/** @type {string[]} */
const idsA = [];
for (let i = 0; i < BACKLOG; i += 50)
  idsA.push(...(await Promise.all(Array.from({ length: Math.min(50, BACKLOG - i) }, (_, j) => submit(info.key, `backlog ${i + j}`)))));
const countDone = async () => (await Promise.all(idsA.map((id) => status(info.key, id)))).filter((s) => s === 'completed').length;
// A's rate before B arrives: completions over two seconds
const doneBefore = await countDone();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, 2000));
const doneAfter = await countDone();
const rate = (doneAfter - doneBefore) / ((performance.now() - t0) / 1000);
const taskMs = (4 / rate) * 1000; // 4 slots: one task takes 4 / (tasks per second)

const submittedB = performance.now();
const idB = await submit(keyB, 'the latecomer');
let stateB = await status(keyB, idB);
while (stateB === 'queued') stateB = await status(keyB, idB, 10);
const startedAfterMs = performance.now() - submittedB;
const queuedAhead = BACKLOG - (await countDone());
// the server's own clock: from B's task being stored to its being claimed
const db = new Database(path.join(info.dataDir, 'mediagate.db'), { readonly: true });
const row = /** @type {{ created_at: number, started_at: number }} */ (db.prepare('SELECT created_at, started_at FROM tasks WHERE id = ?').get(idB));
db.close();
const waitedMs = row.started_at - row.created_at;
child.kill('SIGTERM');
await agent.close();

const fmt = (/** @type {number} */ n) => n.toFixed(0);
const section = [
  '## Fair claims between keys',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.cpus().length}; Node ${process.version}; the gateway (\`bench/gateway-server.js\` with its worker: sandbox \`instant\`, 4 tasks at once) gets ${BACKLOG} \`pic-2\` 2k images from key A, then one from key B. Client and server share the machine.`,
  '',
  '| | value |',
  '|---|---:|',
  `| A's tasks completed per second (4 at once) | ${rate.toFixed(1)} |`,
  `| one task's run time (4 / that rate) | ${fmt(taskMs)} ms |`,
  `| B's task: stored -> claimed by a worker (the server's clock) | ${fmt(waitedMs)} ms |`,
  `| B's task: from the client's submit to its seeing \`processing\` (two round trips to a busy server included) | ${fmt(startedAfterMs)} ms |`,
  `| A's tasks still waiting when B's started | ${queuedAhead} |`,
  '',
  `Target: B's first task starts within one task's run time: **${waitedMs <= taskMs ? 'met' : 'MISSED'}** (stored to claimed). Claims take the lowest fair turn (G85): B's task is next, not behind A's backlog; it waits only for one of the 4 slots to free.`,
].join('\n');
console.log(section);
if (!NO_WRITE) writeDocSection('fairness', section);
process.exit(0);
