// Huge chat messages against the event loop (issue 12, item 1; run by hand after a build:
// `node bin/mediagate.js build && node bench/chat-dos.js`; never part of the tests).
//
// Goal: the event loop's longest stall stays under 50 ms while 20 requests of '国' x 100,000 (each
// with one character changed, so the tokenizer's cache cannot help) run; each request answers
// within its normal time plus counting. The stall is seen from outside: a client asks /healthz
// every 10 ms throughout (one connection), and the longest time one of them took is the longest the
// gateway could not answer. Writes the `bench:chat-dos` section of docs/BENCHMARKS.md unless
// BENCH_NO_WRITE=1.
import os from 'node:os';
import { Agent, request } from 'undici';
import { writeDocSection } from './doc-section.js';
import { startGateway } from './gateway-child.js';

const REQUESTS = Number(process.env.BENCH_DOS_REQUESTS ?? 20);
const CHARS = Number(process.env.BENCH_DOS_CHARS ?? 100_000);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';

const { child, info, base } = await startGateway({ MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: '0' });
const agent = new Agent({ connections: REQUESTS + 2, headersTimeout: 0, bodyTimeout: 0 });
const health = new Agent({ connections: 1 });

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Health probes every 10 ms until `stop` is true; returns each probe's latency, ms. */
async function probeHealth(/** @type {{ stop: boolean }} */ flag) {
  const latencies = [];
  while (!flag.stop) {
    const t = performance.now();
    const res = await request(`${base}/healthz`, { dispatcher: health });
    await res.body.text();
    latencies.push(performance.now() - t);
    await sleep(10);
  }
  return latencies;
}

/** The message: '国' x CHARS with one character moved (so a cache of whole messages cannot help). */
const oneCharacter = (/** @type {number} */ i) => `${'国'.repeat(i)}中${'国'.repeat(CHARS - i - 1)}`;
/** CHARS CJK characters drawn at random (seeded): no piece of it repeats, so no cache of pieces helps either. */
function randomCjk(/** @type {number} */ seed) {
  let x = seed;
  const out = [];
  for (let i = 0; i < CHARS; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(String.fromCharCode(0x4e00 + (x % 3000)));
  }
  return out.join('');
}

/** @param {string} text */
async function hugeChat(text) {
  const t = performance.now();
  const res = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${info.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: text }] }),
  });
  const body = /** @type {{ data?: { usage?: { prompt_tokens?: number } } }} */ (await res.body.json());
  return { status: res.statusCode, ms: performance.now() - t, promptTokens: body.data?.usage?.prompt_tokens ?? 0 };
}

/** @param {number[]} xs @param {number} q */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

// Baseline: the health probes without load.
const idle = { stop: false };
const idleProbes = probeHealth(idle);
await sleep(1000);
idle.stop = true;
const baseline = await idleProbes;

/** One scenario: a request alone, then REQUESTS at once while the health probes run. */
async function scenario(/** @type {(i: number) => string} */ make) {
  const texts = Array.from({ length: REQUESTS + 1 }, (_, i) => make(i + 1));
  const single = await hugeChat(/** @type {string} */ (texts[0]));
  const flag = { stop: false };
  const probes = probeHealth(flag);
  await sleep(200);
  const started = performance.now();
  const results = await Promise.all(texts.slice(1).map(hugeChat));
  const wallMs = performance.now() - started;
  flag.stop = true;
  return { single, results, wallMs, loaded: await probes };
}
const scenarios = [
  { name: `'国' x ${CHARS.toLocaleString('en-US')}, one character moved`, ...(await scenario(oneCharacter)) },
  { name: `${CHARS.toLocaleString('en-US')} random CJK characters`, ...(await scenario(randomCjk)) },
];
child.kill('SIGTERM');
await agent.close();
await health.close();

const fmt = (/** @type {number} */ n) => n.toFixed(1);
const ok = scenarios.every((sc) => sc.results.every((r) => r.status === 200));
const worst = Math.max(...scenarios.flatMap((sc) => sc.loaded));
const section = [
  '## Huge chat messages and the event loop',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.cpus().length}; Node ${process.version}; the gateway (\`bench/gateway-server.js\`, sandbox chat at full speed) gets one, then ${REQUESTS} concurrent chat requests whose one message is ${CHARS.toLocaleString('en-US')} CJK characters (~${((CHARS * 3) / 1024).toFixed(0)} KiB of UTF-8), while a client asks \`/healthz\` every 10 ms on one connection. Client and server share the machine. /healthz without load: p50 ${fmt(quantile(baseline, 0.5))} ms, max ${fmt(Math.max(...baseline))} ms.`,
  '',
  `| Message | One alone | ${REQUESTS} at once: all answered after | each: median / slowest | /healthz meanwhile: p50 / p99 / max |`,
  '|---|---:|---:|---:|---:|',
  ...scenarios.map(
    (sc) =>
      `| ${sc.name} | ${fmt(sc.single.ms)} ms (${sc.single.promptTokens.toLocaleString('en-US')} prompt tokens) | ${fmt(sc.wallMs)} ms, ${sc.results.filter((r) => r.status === 200).length} x 200 | ${fmt(
        quantile(
          sc.results.map((r) => r.ms),
          0.5,
        ),
      )} / ${fmt(Math.max(...sc.results.map((r) => r.ms)))} ms | ${fmt(quantile(sc.loaded, 0.5))} / ${fmt(quantile(sc.loaded, 0.99))} / ${fmt(Math.max(...sc.loaded))} ms (${sc.loaded.length} probes) |`,
  ),
  '',
  `Target: longest stall < 50 ms while they run: **${ok && worst < 50 ? 'met' : 'MISSED'}** (longest health check ${fmt(worst)} ms; it includes a loopback round trip, so it bounds the stall from above). Counting runs on a thread of its own (G82): the event loop only parses and copies the messages; repeated pieces of a message hit the tokenizer's cache, random ones are counted in full.`,
].join('\n');
console.log(section);
if (!NO_WRITE) writeDocSection('chat-dos', section);
process.exit(0);
