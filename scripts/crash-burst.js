#!/usr/bin/env node
// Crash safety under load (issue 6): submits a burst of tasks across every family at once,
// kill -9s the gateway in the middle of the burst, starts it again on the same data directory,
// submits the rest, and checks that every task that was answered 200 reaches `completed`: none
// lost, none stuck, none run to completion twice (from the servers' "task completed" logs); and
// that the credits are right (issue 16): credits are enforced throughout, and afterwards
// `mediagate credits reconcile` exits 0 with every hold settled.
//
//   node scripts/crash-burst.js [--tasks 300] [--concurrency 40] [--kill-after 0.4]
//   node scripts/crash-burst.js --relay [--tasks 240] [--create-delay-ms 200] [--kill-after-starts 2] ...
//
// --relay (issue 13): the gateway killed is one that relays every model to an upstream mediagate
// (providers.json); besides the above, each relayed task must map to exactly one upstream task
// (scripts/crash-burst-relay.js).
//
// Prints one JSON summary line last; exits 0 when every check holds, 1 otherwise.
// test/process/crash-burst.test.ts and test/process/relay-crash-burst.test.ts run it at a size that fits CI.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { burstClient, completedTwice, KINDS } from './crash-burst-load.js';
import { ROOT, startServer, taskIdsLogged } from './crash-burst-process.js';
import { runRelayBurst } from './crash-burst-relay.js';

/**
 * The number after `--name` on the command line, else `fallback`.
 * @param {string} name
 * @param {number} fallback
 */
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const RELAY = process.argv.includes('--relay');
const TASKS = arg('tasks', RELAY ? 240 : 300);
const CONCURRENCY = arg('concurrency', 40);
const KILL_AFTER = arg('kill-after', 0.4);
const DEADLINE_MS = arg('deadline-s', 240) * 1000;

if (RELAY) {
  const summary = await runRelayBurst({
    tasks: TASKS,
    concurrency: CONCURRENCY,
    killAfter: KILL_AFTER,
    killAfterStarts: arg('kill-after-starts', 2),
    deadlineMs: DEADLINE_MS,
    createDelayMs: arg('create-delay-ms', 200),
  });
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : 1);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-crash-burst-'));
const key = `burst_${randomBytes(18).toString('base64url')}`;
const env = {
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_BOOTSTRAP_KEY: key,
  MEDIAGATE_SANDBOX_TIMING: 'instant',
  MEDIAGATE_LEASE_SECONDS: '2',
  MEDIAGATE_LOG_LEVEL: 'info',
  MEDIAGATE_RATE_LIMIT: 'off',
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
  MEDIAGATE_WORKER_CONCURRENCY: '2',
  MEDIAGATE_MIN_FREE_DISK_MB: '0', // what it tests is crashes, not a machine short of disk
  // every submit holds its price and every task settles it (G201): enough credit for the whole burst
  MEDIAGATE_CREDITS: 'on',
  MEDIAGATE_STARTING_CREDITS: '1000000',
};

const started = Date.now();
const client = burstClient({ key, concurrency: CONCURRENCY, kinds: KINDS });
const { accepted } = client;
const first = startServer(env);
const firstUrl = await first.url;
let killed = false;
const all = Array.from({ length: TASKS }, (_, i) => i);
const failedBefore = await client.submitAll(firstUrl, all, () => {
  if (!killed && accepted.size >= TASKS * KILL_AFTER) {
    killed = true;
    first.child.kill('SIGKILL');
  }
});
await first.exited;
const acceptedBeforeKill = accepted.size;

const second = startServer(env);
const secondUrl = await second.url;
// whatever was not accepted before the crash is submitted again after it
const done = new Set(accepted.values());
const failedAfter = await client.submitAll(
  secondUrl,
  all.filter((i) => !done.has(i)),
);

const { counts, pending } = await client.waitFinished(secondUrl, started + DEADLINE_MS);
second.child.kill('SIGTERM');
await second.exited;

const twice = completedTwice(taskIdsLogged(first.output() + second.output(), 'task completed'));
// the books after the crash: every cached balance equals its ledger, every hold settled once
const reconcile = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'mediagate.js'), 'credits', 'reconcile'], { cwd: ROOT, env, encoding: 'utf8' });
const openHolds = Number(/(\d+) holds open/.exec(reconcile.stdout)?.[1] ?? NaN);
const credits = {
  reconciled: reconcile.status === 0,
  openHolds,
  report: reconcile.stdout.trim(),
  ...(reconcile.status !== 0 && { problems: reconcile.stderr.trim() }),
};
const summary = {
  tasks: TASKS,
  accepted: accepted.size,
  acceptedBeforeKill,
  refusedOrCutOff: failedBefore + failedAfter,
  finals: counts,
  stuck: pending.size,
  completedTwice: twice,
  credits,
  seconds: Math.round((Date.now() - started) / 1000),
};
const ok =
  killed && acceptedBeforeKill > 0 && pending.size === 0 && (counts.completed ?? 0) === accepted.size && twice === 0 && credits.reconciled && openHolds === 0;
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(JSON.stringify({ ok, ...summary }));
process.exit(ok ? 0 : 1);
