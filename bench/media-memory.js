// Caller-media memory benchmark (issue 12; run by hand: `npm run build && node bench/media-memory.js`;
// never part of the tests). Target: the gateway's RSS grows by less than 100 MB while it reviews
// three 200 MB reference videos at once.
//
// Makes three distinct 200 MB MP4s (a real 5 s 1280x720 H.264 clip from the bundled ffmpeg,
// padded with a top-level `free` box of random bytes to the size: ffprobe reads it as the 5 s
// 720p video it is, so it passes the `videos` family's limits - mp4, shorter side 720-2160 px,
// at most 15 s and 200 MiB in all) and three 150 MB ones for uploads, serves them from a loopback
// server (streamed from disk), and runs the compiled gateway (bench/gateway-server.js: workers off,
// so only the submit path runs; MEDIAGATE_ALLOW_PRIVATE_URLS=1). Then, each in a fresh gateway:
//   1. three concurrent `POST /v1/videos/videos` requests, one 200 MB `referenceVideos` URL each;
//   2. three concurrent multipart asset uploads (`POST /v2/model-center/assets`) of 150 MB each
//      (answered `rejected`: asset videos must be under 50 MB; they are received and probed whole).
// For each: RSS before (after a warm-up request of each kind), peak (sampled every 20 ms, and the
// kernel's VmHWM mark reset before the run), and 2 s after. Writes the `bench:media-memory`
// section of docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
// Each run repeats BENCH_MEDIA_ROUNDS (3) times in the same gateway (the seconds are the first round's):
// memory that stays bounded does not grow with the bytes reviewed.
// Settings: BENCH_MEDIA_MB (200), BENCH_UPLOAD_MB (150), BENCH_MEDIA_ROUNDS (3), BENCH_GATEWAY_WORKERS (0).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { procMiB, resetPeak, sampleRss, sleep, startGateway, startMediaServer, writeSection } from './media-common.js';

const { ffmpegPath } = /** @type {typeof import('../src/media/ffmpeg.js')} */ (await import(new URL('../dist/media/ffmpeg.js', import.meta.url).href));

/** @param {string} name @param {number} fallback */
function mbEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 209) throw new Error(`${name} must be a whole number of MB, 1-209, got "${raw}"`);
  return n;
}
const MEDIA_MB = mbEnv('BENCH_MEDIA_MB', 200);
const UPLOAD_MB = mbEnv('BENCH_UPLOAD_MB', 150);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
const ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS ?? 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`BENCH_MEDIA_ROUNDS must be a whole number >= 1, got "${process.env.BENCH_MEDIA_ROUNDS}"`);
const CONCURRENT = 3;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-media-memory-'));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));

// a real, small 5 s 720p clip
const base = path.join(work, 'base.mp4');
execFileSync(ffmpegPath(), [
  '-y',
  '-hide_banner',
  '-loglevel',
  'error',
  '-f',
  'lavfi',
  '-i',
  'testsrc=size=1280x720:rate=24:duration=5',
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-pix_fmt',
  'yuv420p',
  '-f',
  'mp4',
  base,
]);

/**
 * The clip padded to exactly `bytes` with a trailing `free` box of random bytes (distinct per file).
 * @param {string} name
 * @param {number} bytes
 */
function padded(name, bytes) {
  const file = path.join(work, name);
  const head = fs.readFileSync(base);
  const pad = bytes - head.length;
  if (pad < 8) throw new Error(`${bytes} bytes is smaller than the clip (${head.length})`);
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, head);
    const box = Buffer.alloc(8);
    box.writeUInt32BE(pad, 0);
    box.write('free', 4, 'latin1');
    fs.writeSync(fd, box);
    const block = randomBytes(1 << 20);
    for (let left = pad - 8; left > 0; left -= block.length) fs.writeSync(fd, block, 0, Math.min(left, block.length));
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

const MB = 1_000_000;
const videos = Array.from({ length: CONCURRENT }, (_, i) => padded(`ref-${i}.mp4`, MEDIA_MB * MB));
const uploads = Array.from({ length: CONCURRENT }, (_, i) => padded(`upload-${i}.mp4`, UPLOAD_MB * MB));

const media = await startMediaServer();
/** @type {import('./media-common.js').GatewayChild | undefined} */
let gw;

/**
 * One `videos` create with `url` as its reference video; answers the HTTP status and the body.
 * @param {import('./media-common.js').GatewayChild} g
 * @param {string} url
 */
async function submitVideo(g, url) {
  const res = await request(`${g.base}/v1/videos/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.info.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'videos', prompt: 'a red fox', duration: 5, referenceVideos: [url] }),
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  return { status: res.statusCode, body: /** @type {{ code?: string, msg?: string | null }} */ (await res.body.json()) };
}

/**
 * One multipart asset upload of `file`, streamed from disk.
 * @param {import('./media-common.js').GatewayChild} g
 * @param {string} file
 */
async function upload(g, file) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = fs.statSync(file).size;
  async function* parts() {
    yield head;
    yield* fs.createReadStream(file, { highWaterMark: 1 << 16 });
    yield tail;
  }
  const res = await request(`${g.base}/v2/model-center/assets`, {
    method: 'POST',
    body: Readable.from(parts()),
    headers: {
      authorization: `Bearer ${g.info.key}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  return { status: res.statusCode, body: /** @type {{ status?: string, reason?: string | null, error?: { message: string } }} */ (await res.body.json()) };
}

/**
 * In a fresh gateway: one warm-up call, then `calls` at once, with the gateway's memory around them.
 * @template T
 * @param {(g: import('./media-common.js').GatewayChild) => Promise<T>} warmUp
 * @param {(g: import('./media-common.js').GatewayChild) => Promise<T>[]} calls
 */
async function measure(warmUp, calls) {
  const g = await startGateway({});
  gw = g;
  const pid = /** @type {number} */ (g.child.pid);
  await warmUp(g);
  await sleep(1000);
  const before = procMiB(pid, 'VmRSS');
  const hwmReset = resetPeak(pid);
  const sampler = sampleRss(pid);
  const t0 = performance.now();
  let results = await Promise.all(calls(g));
  const seconds = (performance.now() - t0) / 1000;
  /** RSS once each round is answered (the first one right after its replies). */
  const rounds = [procMiB(pid, 'VmRSS')];
  for (let round = 1; round < ROUNDS; round++) {
    results = await Promise.all(calls(g));
    rounds.push(procMiB(pid, 'VmRSS'));
  }
  const { peak: sampled, samples } = sampler.stop();
  const hwm = hwmReset ? procMiB(pid, 'VmHWM') : Number.NaN;
  await sleep(2000);
  const after = procMiB(pid, 'VmRSS');
  await g.stop();
  const peak = Number.isNaN(hwm) ? sampled : Math.max(hwm, sampled);
  return { results, before, sampled, samples, hwm, peak, after, seconds, rounds };
}
process.on('exit', () => gw?.child.kill('SIGKILL'));

const warmUrl = media.file('/warm.mp4', base, 'video/mp4');
const urls = videos.map((file, i) => media.file(`/ref-${i}.mp4`, file, 'video/mp4'));
const review = await measure(
  async (g) => {
    const r = await submitVideo(g, warmUrl);
    if (r.status !== 200) throw new Error(`warm-up videos request answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r;
  },
  (g) => urls.map((url) => submitVideo(g, url)),
);
for (const r of review.results) if (r.status !== 200 || r.body.code !== '0') throw new Error(`videos request answered ${r.status}: ${JSON.stringify(r.body)}`);
const uploaded = await measure(
  async (g) => {
    const r = await upload(g, base);
    if (r.status !== 200) throw new Error(`warm-up upload answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r;
  },
  (g) => uploads.map((file) => upload(g, file)),
);
for (const r of uploaded.results)
  if (r.status !== 200 || r.body.status === undefined) throw new Error(`upload answered ${r.status}: ${JSON.stringify(r.body)}`);
await media.close();

const TARGET_MIB = (100 * MB) / (1 << 20); // 100 MB
const fmt = (/** @type {number} */ n) => (Number.isNaN(n) ? 'n/a' : n.toFixed(1));
/** @param {string} what @param {Awaited<ReturnType<typeof measure>>} m @param {string} answers */
const row = (what, m, answers) =>
  `| ${what} | ${answers} | ${m.seconds.toFixed(1)} | ${fmt(m.before)} | ${m.rounds.map(fmt).join(', ')} | ${fmt(m.sampled)} (${m.samples} samples) | ${fmt(m.hwm)} | ${fmt(m.after)} | **${fmt(m.peak - m.before)}** | ${fmt(m.after - m.before)} |`;
const met = (/** @type {boolean} */ ok) => (ok ? '**met**' : '**MISSED**');
const section = [
  '## Caller media: memory while reviewing large media',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.availableParallelism?.() ?? os.cpus().length}; Node ${process.version}. \`node bench/media-memory.js\` after \`npm run build\`: the compiled gateway (\`bench/gateway-server.js\`, workers ${process.env.BENCH_GATEWAY_WORKERS === '1' ? 'on' : 'off'}, \`MEDIAGATE_ALLOW_PRIVATE_URLS=1\`, default media settings) and a loopback server streaming the files from disk. Each MP4 is a real 5 s 1280x720 H.264 clip padded with a top-level \`free\` box of random bytes to its size (ffprobe reads the clip; the \`videos\` limits pass). Each run has a fresh gateway. Memory is the gateway's RSS in MiB (/proc): before = 1 s after a warm-up request of the same kind (the 5 s clip unpadded); peak = the highest 20 ms sample and the kernel's peak mark (VmHWM, reset just before the run) over all ${ROUNDS} rounds of the run (each round: the ${CONCURRENT} requests at once, then the next round); after = 2 s after the last reply.`,
  '',
  '| Run | Answers (last round) | Seconds (first round) | RSS before | RSS after each round | Peak, sampled | Peak, VmHWM | RSS 2 s after | Growth at peak | Growth after |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  row(`${CONCURRENT} concurrent \`videos\` creates, one ${MEDIA_MB} MB \`referenceVideos\` URL each`, review, review.results.map((r) => r.status).join(', ')),
  row(`${CONCURRENT} concurrent multipart asset uploads of ${UPLOAD_MB} MB`, uploaded, uploaded.results.map((r) => `${r.status} ${r.body.status}`).join(', ')),
  '',
  '| Target | Measured | Result |',
  '|---|---:|---|',
  `| RSS growth < 100 MB (${TARGET_MIB.toFixed(1)} MiB) reviewing ${CONCURRENT} x ${MEDIA_MB} MB at once | ${fmt(review.peak - review.before)} MiB | ${met(review.peak - review.before < TARGET_MIB)} |`,
  `| RSS growth < 100 MB (${TARGET_MIB.toFixed(1)} MiB) receiving ${CONCURRENT} x ${UPLOAD_MB} MB uploads at once | ${fmt(uploaded.peak - uploaded.before)} MiB | ${met(uploaded.peak - uploaded.before < TARGET_MIB)} |`,
  '',
  "How: the safe fetcher writes each body to a file in `<data>/tmp` as it arrives (with backpressure, so a body is never ahead of the disk by more than the stream buffers), ffprobe reads that file by path, and an accepted file is renamed into `inputs/<task>/` (multipart uploads likewise, into `assets/<id>/`); see G100-G102 (docs/decisions/caller-media.md). What the gateway still allocates per medium is its socket and stream buffers, the first 512 bytes for the content check, and ffprobe's JSON; the growth above is Node's heap and buffer pools sized for that traffic, independent of the media sizes: the RSS after each round moves by about a MiB while each round moves hundreds of MB of media (new task rows and SQLite's page cache grow with the number of requests, not with their bytes).",
].join('\n');
console.log(section);
if (!NO_WRITE) writeSection('bench:media-memory', section);
process.exit(0);
