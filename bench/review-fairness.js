// Media review fairness benchmark (issue 12 item 5; run by hand: `npm run build && node bench/review-fairness.js`;
// never part of the tests). One key ("A") sends BENCH_STALLED (8) `pic` creates whose image URL
// answers headers and then never sends its body; while their fetches hang, another key ("B")
// sends a `pic` create with a small PNG (about 5 KB). B's latency is compared with B alone. Target:
// B waits only behind its own work, so its latency with A's stalls stays near its latency alone
// (well under A's fetch timeout of 15 s) and B finishes while A's requests are still pending.
// Compiled gateway (bench/gateway-server.js: workers off, default media settings,
// MEDIAGATE_ALLOW_PRIVATE_URLS=1). Writes the `bench:review-fairness` section of
// docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import sharp from 'sharp';
import { request } from 'undici';
import { createKey, sleep, startGateway, startMediaServer, writeSection } from './media-common.js';

const STALLED = Number(process.env.BENCH_STALLED ?? 8);
if (!Number.isInteger(STALLED) || STALLED < 1) throw new Error(`BENCH_STALLED must be a whole number >= 1, got "${process.env.BENCH_STALLED}"`);
const RUNS = 5;
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';

const media = await startMediaServer();
const pixels = randomBytes(40 * 40 * 3); // noise: the PNG stays about as large as the pixels
const png = await sharp(pixels, { raw: { width: 40, height: 40, channels: 3 } })
  .png()
  .toBuffer();
const smallUrl = media.bytes('/small.png', png, 'image/png');
const stallUrl = media.stall('/stall.png');

const gw = await startGateway({});
const keyA = gw.info.key;
const keyB = createKey(gw.info.dataDir, 'bench-b');

/**
 * A `pic` create with one image URL; resolves with the status and the milliseconds it took.
 * @param {string} key
 * @param {string} url
 */
async function submit(key, url) {
  const t0 = performance.now();
  const res = await request(`${gw.base}/v1/pic/images`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pic', prompt: 'a red fox', image_urls: [url] }),
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - t0, at: performance.now() };
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

await submit(keyB, smallUrl); // warm-up
/** @type {number[]} */
const alone = [];
for (let i = 0; i < RUNS; i++) alone.push((await submit(keyB, smallUrl)).ms);

/** @type {{ ms: number, status: number, aPending: number, aFetching: number }[]} */
const loaded = [];
for (let i = 0; i < RUNS; i++) {
  let aDone = 0;
  const before = media.hits.get('/stall.png') ?? 0;
  const stalled = Array.from({ length: STALLED }, () =>
    submit(keyA, stallUrl).finally(() => {
      aDone++;
    }),
  );
  // wait until A's fetches are running (the loopback server has their requests)
  for (let waited = 0; (media.hits.get('/stall.png') ?? 0) === before && waited < 10_000; waited += 10) await sleep(10);
  await sleep(200);
  const aFetching = (media.hits.get('/stall.png') ?? 0) - before;
  const b = await submit(keyB, smallUrl);
  loaded.push({ ms: b.ms, status: b.status, aPending: STALLED - aDone, aFetching });
  const dropping = setInterval(() => media.dropAll(), 20); // A's fetches (queued ones too) fail at once
  await Promise.all(stalled);
  clearInterval(dropping);
}
await gw.stop();
await media.close();

const bLoaded = median(loaded.map((l) => l.ms));
const bAlone = median(alone);
const allPending = loaded.every((l) => l.aPending === STALLED);
const met = (/** @type {boolean} */ ok) => (ok ? '**met**' : '**MISSED**');
const section = [
  '## Caller media: review fairness between keys',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.availableParallelism?.() ?? os.cpus().length}; Node ${process.version}. \`node bench/review-fairness.js\` after \`npm run build\`: compiled gateway (\`bench/gateway-server.js\`, workers off, default media settings, \`MEDIAGATE_ALLOW_PRIVATE_URLS=1\`). Key A sends ${STALLED} \`pic\` creates at once whose image URL answers headers and never sends a body (each fetch would hang until its 15 s timeout); once A's fetches are running, key B sends a \`pic\` create with a ${png.length}-byte PNG. ${RUNS} rounds; after each, A's connections are dropped.`,
  '',
  '| Run | B latency, median ms | min | max | B answers | A requests still pending when B was answered | A fetches running (of them) |',
  '|---|---:|---:|---:|---|---|---|',
  `| B alone | ${bAlone.toFixed(0)} | ${Math.min(...alone).toFixed(0)} | ${Math.max(...alone).toFixed(0)} | 200 x ${RUNS} | - | - |`,
  `| B while A's ${STALLED} fetches hang | ${bLoaded.toFixed(0)} | ${Math.min(...loaded.map((l) => l.ms)).toFixed(0)} | ${Math.max(...loaded.map((l) => l.ms)).toFixed(0)} | ${loaded.map((l) => l.status).join(', ')} | ${loaded.map((l) => l.aPending).join(', ')} | ${loaded.map((l) => l.aFetching).join(', ')} |`,
  '',
  '| Target | Measured | Result |',
  '|---|---:|---|',
  `| B is answered while all of A's requests still wait (B waits only behind its own work) | ${allPending ? 'every round' : 'not every round'} | ${met(allPending)} |`,
  `| B's median latency with A's stalls < 1 s (A's fetches time out after 15 s) | ${bLoaded.toFixed(0)} ms | ${met(bLoaded < 1000)} |`,
].join('\n');
console.log(section);
if (!NO_WRITE) writeSection('bench:review-fairness', section);
process.exit(0);
