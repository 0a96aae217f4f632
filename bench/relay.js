// Relayed generations at scale (issue 13; run by hand after a build:
// `node bin/mediagate.js build && node bench/relay.js`; never part of the tests).
//
// The gateway (a child process, its worker on, providers.json with one `relay` to a fake upstream,
// bench/fake-upstream.js, in this process) gets BENCH_RELAY_TASKS (10,000) motion video tasks; the
// upstream finishes each BENCH_RELAY_FINISH_S (150) seconds after its create; the relay checks every
// BENCH_RELAY_POLL_S (30) seconds (+-20% jitter). Tasks are submitted at BENCH_RELAY_SUBMIT_PER_S
// (100) a second, so all are at the upstream together before the first finishes; 0 submits them
// as fast as the gateway takes them (every finish in one burst: the worst case). Measured:
//   - the gateway's CPU (user + system, /proc) and RSS while all tasks wait at the upstream, and
//     while they complete (every result downloaded and probed into the gateway's storage);
//   - checks per task per interval: the gaps between a task's consecutive queries at the upstream;
//   - how long after the upstream finished a task it was `completed` for the caller (the gateway's
//     finished_at, from its database), against that task's own check interval.
// Targets: under 0.5 core and 300 MB RSS with the tasks in flight, at most one check per task per
// interval, completed within its check interval + 2 s of the upstream finishing (p99).
// Writes the `bench:relay` (or `bench:relay-burst`) section of docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { writeDocSection } from './doc-section.js';
import { distribution } from './fake-upstream-stats.js';
import { startFakeUpstream } from './fake-upstream.js';
import { startGateway } from './gateway-child.js';

const TASKS = Number(process.env.BENCH_RELAY_TASKS ?? 10_000);
const FINISH_S = Number(process.env.BENCH_RELAY_FINISH_S ?? 150);
const POLL_S = Number(process.env.BENCH_RELAY_POLL_S ?? 30);
/**
 * Submits per second (default 100: 10,000 tasks over 100 s, all of them at the upstream together
 * from then until the first finishes; finishes then come at that rate). 0 submits as fast as the
 * gateway takes them: every finish in one burst of a few seconds, the worst case, written to its
 * own section (`bench:relay-burst`).
 */
const SUBMIT_PER_S = Number(process.env.BENCH_RELAY_SUBMIT_PER_S ?? 100);
const SECTION = SUBMIT_PER_S > 0 ? 'relay' : 'relay-burst';
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
const TICK = 100; // USER_HZ: clock ticks per second in /proc/<pid>/stat (100 on Linux)

const upstream = await startFakeUpstream({ finishMs: FINISH_S * 1000, apiKey: 'bench-upstream-key' });
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-bench-relay-'));
const providersFile = path.join(configDir, 'providers.json');
fs.writeFileSync(
  providersFile,
  JSON.stringify({
    providers: { up: { type: 'relay', baseUrl: upstream.url, apiKeyEnv: 'BENCH_UPSTREAM_KEY', pollSeconds: POLL_S, concurrency: 64 } },
    routes: { '*': [{ provider: 'up' }] },
  }),
);
const { child, info, base, rssMiB } = await startGateway({
  BENCH_GATEWAY_WORKERS: '1',
  MEDIAGATE_PROVIDERS: providersFile,
  BENCH_UPSTREAM_KEY: 'bench-upstream-key',
  MEDIAGATE_WORKER_CONCURRENCY: '64',
});
const pid = /** @type {number} */ (child.pid);

/** CPU seconds (user + system) the gateway has used so far. */
function cpuSeconds() {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICK; // utime, stime (fields 14, 15 of the whole line)
}

/** CPU share (cores) and the largest RSS over a phase, sampled every second until `until()` says stop. */
async function measure(/** @type {() => boolean} */ until) {
  const t0 = performance.now();
  const c0 = cpuSeconds();
  let rss = rssMiB();
  while (!until()) {
    await new Promise((r) => setTimeout(r, 1000));
    rss = Math.max(rss, rssMiB());
  }
  return { seconds: (performance.now() - t0) / 1000, cores: (cpuSeconds() - c0) / ((performance.now() - t0) / 1000), maxRssMiB: rss };
}

// 1. submit
const agent = new Agent({ connections: 64 });
const submitStart = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 64 }, async () => {
    while (next < TASKS) {
      const i = next++;
      const due = submitStart + (SUBMIT_PER_S > 0 ? (i / SUBMIT_PER_S) * 1000 : 0);
      if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
      const res = await request(`${base}/v1/motion/videos`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${info.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: `relay bench ${i}` }] }),
      });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`submit ${i} answered ${res.statusCode}: ${body}`);
    }
  }),
);
const submitSeconds = (performance.now() - submitStart) / 1000;
console.error(`submitted ${TASKS} tasks in ${submitSeconds.toFixed(1)} s`);

// 2. every task started at the upstream
const db = new Database(path.join(info.dataDir, 'mediagate.db'), { readonly: true, fileMustExist: true });
const count = (/** @type {string} */ where) =>
  /** @type {{ n: number }} */ (db.prepare(`SELECT count(*) AS n FROM tasks WHERE model = 'motion_2_0_4s_5s' AND ${where}`).get()).n;
while (upstream.tasks.size < TASKS) await new Promise((r) => setTimeout(r, 200));
console.error(`all ${TASKS} started at the upstream`);

// 3. waiting: from then until the first upstream finish (less 2 s)
const firstFinish = Math.min(...[...upstream.tasks.values()].map((t) => t.finishMs));
const waiting = await measure(() => performance.now() >= firstFinish - 2000);
console.error(`waiting: ${waiting.cores.toFixed(3)} cores, ${waiting.maxRssMiB.toFixed(0)} MiB over ${waiting.seconds.toFixed(0)} s`);

// 4. completing: until every task is completed for the caller
let done = 0;
const completing = await measure(() => {
  done = count("status = 'completed'");
  return done >= TASKS || count("status IN ('failed', 'cancelled')") > 0;
});
console.error(`completing: ${completing.cores.toFixed(3)} cores, ${completing.maxRssMiB.toFixed(0)} MiB over ${completing.seconds.toFixed(0)} s`);

// 5. per task: the gaps between checks, and completed-for-the-caller after the upstream finished
const rows = /** @type {Array<{ finished_at: number | null, upstream: string | null, status: string }>} */ (
  db.prepare("SELECT finished_at, upstream, status FROM tasks WHERE model = 'motion_2_0_4s_5s'").all()
);
const failed = /** @type {Array<{ error: string, n: number }>} */ (
  db.prepare("SELECT error, count(*) AS n FROM tasks WHERE model = 'motion_2_0_4s_5s' AND status != 'completed' GROUP BY error").all()
);
if (failed.length > 0) console.error('not completed:', failed);
const toEpoch = (/** @type {number} */ ms) => performance.timeOrigin + ms;
/** @type {number[]} */ const gaps = [];
/** @type {number[]} */ const delays = [];
/** @type {number[]} */ const overInterval = [];
let checks = 0;
for (const row of rows) {
  const ref = row.upstream ? /** @type {{ ref?: { id: string } }} */ (JSON.parse(row.upstream)).ref : undefined;
  const t = ref ? upstream.tasks.get(ref.id) : undefined;
  if (!t || row.finished_at === null) continue;
  checks += t.queryMs.length;
  for (let i = 1; i < t.queryMs.length; i++) gaps.push((Number(t.queryMs[i]) - Number(t.queryMs[i - 1])) / 1000);
  const delay = (row.finished_at - toEpoch(t.finishMs)) / 1000;
  delays.push(delay);
  // against its configured check interval (the longest the jitter allows), not the gap the checks
  // really had: a check made late (the worker busy) must count against the target, not widen it
  overInterval.push(delay - POLL_S * 1.2);
}
const stats = upstream.stats();
const gapDist = distribution(gaps);
const delayDist = distribution(delays);
const overDist = distribution(overInterval);
const tooSoon = gaps.filter((g) => g < POLL_S * 0.8 - 0.5).length;

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await upstream.close();
fs.rmSync(configDir, { recursive: true, force: true });

const fmt = (/** @type {number | null} */ v, digits = 1) => (v === null ? '-' : v.toFixed(digits));
const met = (/** @type {boolean} */ ok) => (ok ? 'met' : '**missed**');
const cpuOk = waiting.cores < 0.5;
const rssOk = Math.max(waiting.maxRssMiB, completing.maxRssMiB) < 300e6 / 1_048_576; // 300 MB = 286.1 MiB
const checksOk = tooSoon === 0;
const delayOk = (overDist.p99 ?? Number.POSITIVE_INFINITY) <= 2;
const pacing =
  SUBMIT_PER_S > 0
    ? `Tasks were submitted at ${SUBMIT_PER_S} a second (${submitSeconds.toFixed(1)} s), so all ${TASKS} were at the upstream together and finished at that rate.`
    : `Tasks were submitted as fast as the gateway took them (${submitSeconds.toFixed(1)} s), so they all finished within that time: the worst case.`;
const section = `## Relayed generations${SUBMIT_PER_S > 0 ? '' : ', every finish in one burst'} (bench/relay.js${SUBMIT_PER_S > 0 ? '' : ', BENCH_RELAY_SUBMIT_PER_S=0'})

${TASKS} motion tasks relayed to a fake upstream (bench/fake-upstream.js) that finishes each ${FINISH_S} s after its
create; checks every ${POLL_S} s (+-20% jitter); the gateway's worker with the relay at concurrency 64, on
${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown CPU'}. ${pacing}

| Measure | Result | Target |
|---|---|---|
| CPU while ${TASKS} tasks wait at the upstream (${waiting.seconds.toFixed(0)} s) | ${waiting.cores.toFixed(3)} cores | < 0.5 core: ${met(cpuOk)} |
| CPU while they complete (${completing.seconds.toFixed(0)} s: every MP4 downloaded, probed, stored) | ${completing.cores.toFixed(3)} cores | - |
| Largest RSS (waiting / completing) | ${waiting.maxRssMiB.toFixed(0)} / ${completing.maxRssMiB.toFixed(0)} MiB | < 300 MB (286 MiB): ${met(rssOk)} |
| Checks (queries at the upstream) | ${checks} for ${rows.length} tasks; repeated creates ${stats.duplicateCreates} | - |
| Gap between a task's checks, s (min / p50 / p99) | ${fmt(gapDist.min)} / ${fmt(gapDist.p50)} / ${fmt(gapDist.p99)}; ${tooSoon} shorter than ${(POLL_S * 0.8).toFixed(0)} s | <= 1 check per interval: ${met(checksOk)} |
| Completed for the caller after the upstream finished, s (p50 / p99 / max) | ${fmt(delayDist.p50)} / ${fmt(delayDist.p99)} / ${fmt(delayDist.max)} | - |
| ... minus the check interval (${(POLL_S * 1.2).toFixed(0)} s, the longest with jitter), s (p50 / p99 / max) | ${fmt(overDist.p50, 2)} / ${fmt(overDist.p99, 2)} / ${fmt(overDist.max, 2)} | <= 2 s at p99: ${met(delayOk)} |
| Tasks completed | ${done} of ${TASKS} | all |
`;
console.log(section);
if (!NO_WRITE) writeDocSection(SECTION, section);
process.exit(0);
