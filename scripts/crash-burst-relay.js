// `scripts/crash-burst.js --relay` (issue 13): an upstream mediagate (sandbox, its own data
// directory and port) and a relaying mediagate whose providers.json sends every model to it
// (`relay`, key by apiKeyEnv, fast pollSeconds). A burst across every family and both forms of clip
// and reel goes to the relaying one, which is killed with SIGKILL while its creates and checks are
// in flight, and started again on the same data directory and port; the rest of the burst follows.
// Then: every accepted task completed, none twice, and each maps to exactly one upstream task
// (crash-burst-upstream-check.js). Returns the summary; `ok` when every check holds (else the data
// directories are kept, with each process's log). G125 (docs/decisions/provider-relay.md).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { burstClient, completedTwice, KINDS_BOTH_FORMS } from './crash-burst-load.js';
import { freePort, startServer, taskIdsLogged } from './crash-burst-process.js';
import { startDelayProxy } from './crash-burst-delay-proxy.js';
import { checkRelayed, readRelayingTasks } from './crash-burst-upstream-check.js';

const STARTED_AT_UPSTREAM = 'generation started at the upstream';

/** @param {string} dataDir @param {string} key @param {number} port */
const gatewayEnv = (dataDir, key, port) => ({
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  MEDIAGATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_BOOTSTRAP_KEY: key,
  MEDIAGATE_LEASE_SECONDS: '2',
  MEDIAGATE_LOG_LEVEL: 'info',
  MEDIAGATE_RATE_LIMIT: 'off',
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
  MEDIAGATE_WORKER_CONCURRENCY: '2',
  MEDIAGATE_MIN_FREE_DISK_MB: '0', // what it tests is crashes, not a machine short of disk
});

const newKey = () => `burst_${randomBytes(18).toString('base64url')}`;

/**
 * Starts a gateway on `port`, or on another free port when that one was taken meanwhile.
 * @param {(port: number) => NodeJS.ProcessEnv} envFor
 * @param {number} port
 */
async function startOn(envFor, port) {
  for (let attempt = 1; ; attempt++) {
    const server = startServer(envFor(port));
    try {
      return { server, url: await server.url };
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('EADDRINUSE')) throw err;
      port = await freePort();
    }
  }
}

/**
 * Uploads a picture to the gateway at `base` (an asset); answers its `assetId://` reference.
 * @param {string} base
 * @param {string} key
 */
async function uploadAsset(base, key) {
  const png = await sharp({ create: { width: 400, height: 400, channels: 3, background: '#3a6' } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'reference.png');
  const res = await fetch(`${base}/v2/model-center/assets`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const asset = /** @type {{ id?: string, status?: string }} */ (await res.json());
  if (res.status !== 200 || asset.status !== 'approved') throw new Error(`asset upload: ${res.status} ${JSON.stringify(asset)}`);
  return `assetId://${asset.id}`;
}

/**
 * `killAfter`: the share of the burst accepted before the kill; `killAfterStarts`: the generations
 * the killed process must have started at the upstream (logged) before it, so checks are due.
 * @param {{ tasks: number, concurrency: number, killAfter: number, killAfterStarts: number, deadlineMs: number, createDelayMs: number }} options
 */
export async function runRelayBurst({ tasks, concurrency, killAfter, killAfterStarts, deadlineMs, createDelayMs }) {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-relay-burst-'));
  const upstreamDir = path.join(dir, 'upstream');
  const relayingDir = path.join(dir, 'relaying');
  const upstreamKey = newKey();
  const key = newKey();

  // the upstream is reached through the proxy, its result URLs too (at the relay's own origin: trusted)
  const proxy = await startDelayProxy(createDelayMs);
  const upstream = await startOn(
    (port) => ({
      ...gatewayEnv(upstreamDir, upstreamKey, port),
      MEDIAGATE_PUBLIC_URL: proxy.origin,
      MEDIAGATE_SANDBOX_TIMING: 'instant',
      MEDIAGATE_ALLOW_PRIVATE_URLS: '1', // it fetches relayed uploads from the relaying gateway, on this machine
    }),
    await freePort(),
  );
  proxy.target = upstream.url;
  const providersFile = path.join(dir, 'providers.json');
  fs.writeFileSync(
    providersFile,
    JSON.stringify({
      providers: { upstream: { type: 'relay', baseUrl: proxy.origin, apiKeyEnv: 'CRASH_BURST_UPSTREAM_KEY', pollSeconds: 2, concurrency: 8 } },
      routes: { '*': [{ provider: 'upstream' }] },
    }),
  );
  /** @param {number} port */
  const relayingEnv = (port) => ({ ...gatewayEnv(relayingDir, key, port), MEDIAGATE_PROVIDERS: providersFile, CRASH_BURST_UPSTREAM_KEY: upstreamKey });

  const first = await startOn(relayingEnv, await freePort());
  // an upload used as a reference (by the first picture of every five): relayed as a signed URL of
  // the relaying gateway's copy, which a create repeated after the restart must carry unchanged (G95)
  const asset = await uploadAsset(first.url, key);
  /** @type {import('./crash-burst-load.js').Kind} */
  const withUpload = ['/v1/pic/images', (i) => ({ model: 'pic', prompt: `burst ${i}`, image_urls: [asset] })];
  const client = burstClient({ key, concurrency, kinds: KINDS_BOTH_FORMS.map((kind, j) => (j % 5 === 0 ? withUpload : kind)) });
  const { accepted } = client;
  const startsLogged = () => first.server.output().split(STARTED_AT_UPSTREAM).length - 1;
  let armed = false;
  /** @type {() => void} */
  let kill = () => undefined;
  const killed = new Promise((resolve) => {
    kill = () => {
      first.server.child.kill('SIGKILL');
      resolve(undefined);
    };
  });
  // Past `killAfter` of the burst, the submitters wait for the kill: as soon as the relaying gateway
  // has started generations (checks are due) and the upstream has answered one more create relaying
  // the upload (its signed `/inputs/` URL), whose answer the proxy is holding: a create the upstream
  // took, its reference not yet saved, whose repeat must carry the same URL.
  proxy.onHeld = (body) => {
    if (armed && body.includes('/inputs/') && startsLogged() >= killAfterStarts) kill();
  };
  const all = Array.from({ length: tasks }, (_, i) => i);
  const failedBefore = await client.submitAll(first.url, all, () => {
    if (accepted.size < tasks * killAfter) return;
    armed = true;
    return Promise.race([killed, new Promise((resolve) => setTimeout(resolve, 60_000))]).then(() => undefined);
  });
  first.server.child.kill('SIGKILL'); // (already killed, unless the burst was too small to reach killAfter)
  await first.server.exited;
  const acceptedBeforeKill = accepted.size;
  const atKill = readRelayingTasks(relayingDir);

  // same port, so same public URL: the repeated creates must carry the same upload URLs (G125)
  const restartedAt = Date.now();
  const secondServer = startServer(relayingEnv(Number(new URL(first.url).port)));
  const second = { server: secondServer, url: await secondServer.url };
  const done = new Set(accepted.values());
  const failedAfter = await client.submitAll(
    second.url,
    all.filter((i) => !done.has(i)),
  );
  const { counts, pending } = await client.waitFinished(second.url, started + deadlineMs);
  for (const s of [second.server, upstream.server]) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  await proxy.close();

  const { violations, stats } = checkRelayed({ relayingDir, upstreamDir, accepted: accepted.keys(), atKill, restartedAt });
  const relayingTwice = completedTwice(taskIdsLogged(first.server.output() + second.server.output(), 'task completed'));
  const upstreamTwice = completedTwice(taskIdsLogged(upstream.server.output(), 'task completed'));
  // the kill cut the burst: creates and checks were in flight, submits came after it
  const exercised =
    acceptedBeforeKill > 0 &&
    acceptedBeforeKill < accepted.size &&
    stats.checkingAtKill > 0 &&
    stats.queuedAtKill > 0 &&
    (createDelayMs === 0 || stats.uploadCreatesCutByKill > 0);
  const ok =
    exercised &&
    pending.size === 0 &&
    (counts.completed ?? 0) === accepted.size &&
    relayingTwice === 0 &&
    upstreamTwice === 0 &&
    Object.keys(violations).length === 0;
  if (ok) fs.rmSync(dir, { recursive: true, force: true });
  else
    for (const [name, server] of Object.entries({ upstream: upstream.server, first: first.server, second: second.server }))
      fs.writeFileSync(path.join(dir, `${name}.log`), server.output());
  return {
    ok,
    mode: 'relay',
    tasks,
    accepted: accepted.size,
    acceptedBeforeKill,
    refusedOrCutOff: failedBefore + failedAfter,
    finals: counts,
    stuck: pending.size,
    completedTwice: relayingTwice,
    upstreamCompletedTwice: upstreamTwice,
    ...stats,
    violations,
    seconds: Math.round((Date.now() - started) / 1000),
    ...(!ok && { dataDir: dir }),
  };
}
