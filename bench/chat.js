// Chat streaming benchmark (run by hand, never part of the tests):
//   node bin/mediagate.js build && node bench/chat.js
//
// In one run it starts bench/fake-openai.js (an OpenAI-compatible upstream streaming
// BENCH_CHAT_TOKENS tokens at a fixed pace), bench/gateway-server.js (the compiled gateway, with
// MEDIAGATE_CHAT_UPSTREAM_* pointing at the fake, workers off, logs silent, temp data dir) and
// bench/bare-relay.js (a bare pass-through proxy to the fake: the floor any gateway process pays),
// each its own process. This process is the client: BENCH_CHAT_REQUESTS streamed completions per
// target at BENCH_CHAT_CONCURRENCY, straight to the fake, through the bare relay and through
// mediagate, in rotating rounds (BENCH_CHAT_ROUNDS) so drift on the machine hits all alike. Measured per request: time to the
// first content token (from sending the request), split with the fake's own timeline into its wait,
// the way in and the way out (see fake-openai.js), and the time to the last one. BENCH_CHAT_PACES
// (ms between tokens, default "10,2": 100 tokens/s per stream, a fast real upstream, then 500
// tokens/s per stream as a stress case) runs the whole comparison once per pace and arrival
// pattern (BENCH_CHAT_ARRIVALS, below).
// Targets (issue 4), judged on spread arrivals: added TTFT median <= 1 ms (the fake's own wait taken
// out of each TTFT); token throughput >= 0.95x direct.
// Writes the `bench:chat` section of docs/BENCHMARKS.md unless BENCH_NO_WRITE=1.
import { BENCHMARKS_DOC, writeDocSection } from './doc-section.js';
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
/** @param {string} name @param {number} fallback */
const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number >= 0, got "${raw}"`);
  return n;
};
const REQUESTS = num('BENCH_CHAT_REQUESTS', 200);
const CONCURRENCY = num('BENCH_CHAT_CONCURRENCY', 10);
const ROUNDS = num('BENCH_CHAT_ROUNDS', 4);
const WARMUP = num('BENCH_CHAT_WARMUP', 30);
const TOKENS = num('BENCH_CHAT_TOKENS', 200);
const PACES = (process.env.BENCH_CHAT_PACES ?? '10,2').split(',').map((x) => Number(x.trim()));
if (PACES.some((x) => !Number.isFinite(x) || x < 0) || PACES.length === 0 || PACES.length > 6)
  throw new Error('BENCH_CHAT_PACES: up to 6 numbers of ms, comma-separated');
const FIRST_MS = num('BENCH_CHAT_FIRST_MS', 5);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
/**
 * BENCH_CHAT_ARRIVALS (default "spread,burst"): how the CONCURRENCY clients start. `spread`: client i
 * starts i/CONCURRENCY of a reply's duration after the first, so the replies (all the same length)
 * end, and the next requests arrive, one at a time, as independent users' would. `burst`: all start
 * at once and stay in lock step, so every request arrives in a burst of CONCURRENCY (a worst case:
 * each waits for the ones before it). The targets are judged on `spread`.
 */
const ARRIVALS = (process.env.BENCH_CHAT_ARRIVALS ?? 'spread,burst').split(',').map((x) => x.trim());
if (ARRIVALS.length === 0 || ARRIVALS.some((a) => a !== 'spread' && a !== 'burst'))
  throw new Error('BENCH_CHAT_ARRIVALS: spread and/or burst, comma-separated');
/** BENCH_CPU_PROF=1: the gateway runs with --cpu-prof; its profile goes to BENCH_PROF_DIR (default $TMPDIR/mediagate-bench-profiles). */
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
/**
 * BENCH_CHAT_PIN=1: the gateway runs alone on core 1, the client and the fake upstream share core 0
 * (this script re-runs itself under `taskset -c 0`), as when the gateway has a machine of its own.
 */
const PIN = process.env.BENCH_CHAT_PIN === '1';
if (PIN && process.env.BENCH_CHAT_PINNED !== '1') {
  const { status } = spawnSync('taskset', ['-c', '0', process.execPath, fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_CHAT_PINNED: '1' },
  });
  process.exit(status ?? 1);
}
/** BENCH_GATEWAY_NODE_ARGS: extra node options for the gateway process (space-separated), e.g. V8 flags under study. */
const GATEWAY_NODE_ARGS = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const PROF_DIR = process.env.BENCH_PROF_DIR ?? path.join(os.tmpdir(), 'mediagate-bench-profiles');
const TARGETS = { addedTtftMs: 1, throughputRatio: 0.95 };

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
process.on('exit', () => {
  for (const c of children)
    try {
      c.kill('SIGKILL');
    } catch {
      /* gone */
    }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

/**
 * The gateway's startup line (bench/gateway-server.js); the fake upstream and the relay print only the port.
 * @typedef {import('./gateway-server.js').StartupLine} GatewayLine
 */

/**
 * Starts `script` with node (under `taskset -c <cpu>` when `cpu` is given) and resolves with the JSON
 * object it prints first on stdout.
 * @param {string} script
 * @param {NodeJS.ProcessEnv} env
 * @param {string[]} [nodeArgs]
 * @param {number} [cpu]
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, info: { port: number } & Partial<GatewayLine> }>}
 */
function startChild(script, env, nodeArgs = [], cpu = undefined) {
  const argv = [...nodeArgs, path.join(here, script)];
  const child =
    cpu === undefined
      ? spawn(process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn('taskset', ['-c', String(cpu), process.execPath, ...argv], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script}: no startup line in 30 s`)), 30_000);
    // the first JSON line is the startup line; anything else (V8 traces under BENCH_GATEWAY_NODE_ARGS) is passed to stderr
    let started = false;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!started && line.startsWith('{')) {
        started = true;
        clearTimeout(timer);
        resolve({ child, info: JSON.parse(line) });
      } else process.stderr.write(`${line}\n`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited early (code ${code})`));
    });
  });
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<void>}
 */
function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const fakeEnv = { ...process.env, BENCH_CHAT_TOKENS: String(TOKENS), BENCH_CHAT_FIRST_MS: String(FIRST_MS) };
// one chat model per pace; the fake reads the pace from the upstream model name `pace-<ms>`
const CHAT_MODELS = ['chat-2.5-flash', 'chat-2.5-pro', 'chat-3-flash-preview', 'chat-2.5-flash-lite', 'chat-3.1-pro-preview', 'chat-3-pro-preview'];
const fake = await startChild('fake-openai.js', fakeEnv);
const upstreamBase = `http://127.0.0.1:${fake.info.port}/v1`;
const gateway = await startChild(
  'gateway-server.js',
  {
    ...process.env,
    MEDIAGATE_CHAT_UPSTREAM_URL: upstreamBase,
    MEDIAGATE_CHAT_UPSTREAM_KEY: 'sk-bench-not-a-real-key',
    MEDIAGATE_CHAT_UPSTREAM_MODELS: PACES.map((pace, i) => `${CHAT_MODELS[i]}=pace-${pace}`).join(','),
    MEDIAGATE_CHAT_CONFIG: '',
    MEDIAGATE_WORKERS: '0',
    MEDIAGATE_LOG_LEVEL: 'silent',
  },
  [
    ...GATEWAY_NODE_ARGS,
    ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, `--cpu-prof-interval=${process.env.BENCH_PROF_INTERVAL_US ?? 1000}`] : []),
  ],
  PIN ? 1 : undefined,
);
const gatewayBase = `http://127.0.0.1:${gateway.info.port}`;
const relay = await startChild('bare-relay.js', { ...process.env, BENCH_RELAY_UPSTREAM: upstreamBase }, [], PIN ? 1 : undefined);
const relayBase = `http://127.0.0.1:${relay.info.port}/v1`;

const agent = new Agent({ connections: CONCURRENCY * 2, pipelining: 1, keepAliveTimeout: 60_000 });
// each request's message carries a mark the fake upstream keys its timeline by (bench/fake-openai.js)
const messages = [{ role: 'user', content: 'Count from 0 to 199, one number per token. [bench:MARK]' }];
let marks = 0;
/**
 * The three targets of one pace: straight to the fake, through the bare relay, through mediagate.
 * @param {number} pace ms between tokens
 * @param {number} i the pace's index (its chat model)
 */
const targetsFor = (pace, i) => ({
  direct: {
    url: `${upstreamBase}/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-not-a-real-key' },
    body: JSON.stringify({ model: `pace-${pace}`, messages, stream: true, stream_options: { include_usage: true } }),
  },
  relay: {
    url: `${relayBase}/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-not-a-real-key' },
    body: JSON.stringify({ model: `pace-${pace}`, messages, stream: true, stream_options: { include_usage: true } }),
  },
  gateway: {
    url: `${gatewayBase}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.info.key}` },
    body: JSON.stringify({ model: CHAT_MODELS[i], messages, stream: true }),
  },
});
const expected = Array.from({ length: TOKENS }, (_, i) => `t${i} `).join('');

/** The machine's monotonic clock in ms (the fake upstream reads the same clock). */
const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;

/**
 * Where one streamed completion goes: the body's `MARK` is replaced by the request's mark.
 * @typedef {{ url: string, headers: Record<string, string>, body: string }} Target
 */

/**
 * One streamed completion; times in ms from just before the request is sent (`t0`: on the shared clock).
 * @param {Target} target
 */
async function one(target) {
  const mark = `m${++marks}`;
  const t0 = nowMs();
  const res = await request(target.url, { method: 'POST', headers: target.headers, body: target.body.replace('MARK', mark), dispatcher: agent });
  if (res.statusCode !== 200) throw new Error(`${target.url} answered ${res.statusCode}: ${await res.body.text()}`);
  let first;
  let last;
  let buf = '';
  let content = '';
  let sawDone = false;
  res.body.setEncoding('utf8');
  for await (const piece of res.body) {
    buf += piece;
    for (let i = buf.indexOf('\n\n'); i !== -1; i = buf.indexOf('\n\n')) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') {
          sawDone = true;
          continue;
        }
        const json = JSON.parse(data);
        if (json.error) throw new Error(`stream error: ${JSON.stringify(json.error)}`);
        const c = json.choices?.[0]?.delta?.content;
        if (typeof c === 'string' && c !== '') {
          const now = nowMs();
          first ??= now;
          last = now;
          content += c;
        }
      }
    }
  }
  if (!sawDone || content !== expected)
    throw new Error(`incomplete stream from ${target.url} (${content.length} of ${expected.length} chars, [DONE] ${sawDone})`);
  if (first === undefined || last === undefined) throw new Error(`no content token from ${target.url}`);
  return { mark, t0, first, ttft: first - t0, total: last - t0, stream: last - first };
}

/** @typedef {Awaited<ReturnType<typeof one>>} Sample */
/** @typedef {{ wait: number, inLeg: number, outLeg: number, transit: number }} Timeline */

/**
 * Adds the fake upstream's timeline to results: `wait` (its own time from the request's arrival to
 * the first token), `inLeg` (client send -> upstream has the request) and `outLeg` (upstream writes
 * the first token -> client has it); `transit` = TTFT - wait = inLeg + outLeg.
 * @param {Array<Sample & Partial<Timeline>>} results
 */
async function addTimelines(results) {
  const res = await request(`${upstreamBase.replace(/\/v1$/, '')}/bench/timings`, { dispatcher: agent });
  const timings = /** @type {import('./fake-openai.js').Timings} */ (await res.body.json());
  for (const r of results) {
    const t = timings[r.mark];
    if (!t) throw new Error(`the fake upstream has no timeline for ${r.mark}`);
    r.wait = t[1] - t[0];
    r.inLeg = t[0] - r.t0;
    r.outLeg = r.first - t[1];
    r.transit = r.ttft - r.wait;
  }
}

/**
 * `count` requests at `CONCURRENCY`; resolves with per-request results and the wall time.
 * @param {Target} target
 * @param {number} count
 */
async function phase(target, count, spreadMs = 0) {
  /** @type {Array<Sample & Partial<Timeline>>} */
  const results = [];
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  const workers = Math.min(CONCURRENCY, count);
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      if (spreadMs > 0) await new Promise((resolve) => setTimeout(resolve, (w * spreadMs) / workers));
      while (next < count) {
        next++;
        try {
          results.push(await one(target));
        } catch (err) {
          errors++;
          if (errors <= 3) console.error(String(err));
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  await addTimelines(results);
  // every result has its timeline now
  return { results: /** @type {Array<Sample & Timeline>} */ (results), errors, wallMs };
}

/** @param {number[]} sorted ascending, not empty @param {number} q */
const quantile = (sorted, q) => /** @type {number} */ (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
/** @param {number[]} xs not empty */
const median = (xs) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

console.log(
  `fake upstream ${upstreamBase}, gateway ${gatewayBase}; ${REQUESTS} requests per target, concurrency ${CONCURRENCY}, ${TOKENS} tokens (first after ${FIRST_MS} ms) every ${PACES.join(' / ')} ms, ${ROUNDS} alternating rounds`,
);

/**
 * A target's figures over all its requests.
 * @param {Phase} s
 */
function summary(s) {
  const ttft = s.results.map((x) => x.ttft).sort((a, b) => a - b);
  return {
    n: s.results.length,
    errors: s.errors,
    ttftMedian: quantile(ttft, 0.5),
    ttftP99: quantile(ttft, 0.99),
    transitMedian: median(s.results.map((x) => x.transit)),
    transitP99: quantile(
      s.results.map((x) => x.transit).sort((a, b) => a - b),
      0.99,
    ),
    inLegMedian: median(s.results.map((x) => x.inLeg)),
    outLegMedian: median(s.results.map((x) => x.outLeg)),
    waitMedian: median(s.results.map((x) => x.wait)),
    totalMedian: median(s.results.map((x) => x.total)),
    streamRate: median(s.results.map((x) => (TOKENS - 1) / (x.stream / 1000))),
    throughput: (s.results.length * TOKENS) / (s.wallMs / 1000),
  };
}

/** The 1-minute load average (os.loadavg() always has three entries). */
const loadAverage = () => /** @type {number} */ (os.loadavg()[0]);
const load0 = loadAverage();
/** @typedef {keyof ReturnType<typeof targetsFor>} TargetName */
/** @typedef {Awaited<ReturnType<typeof phase>>} Phase */
const runs = [];
for (const [pi, pace] of PACES.entries()) {
  const targets = targetsFor(pace, pi);
  /** @type {TargetName[]} */
  const names = ['direct', 'relay', 'gateway'];
  for (const name of names) await phase(targets[name], WARMUP);
  for (const arrivals of ARRIVALS) {
    const all = /** @type {Record<TargetName, Phase>} */ (
      Object.fromEntries(names.map((name) => [name, /** @type {Phase} */ ({ results: [], errors: 0, wallMs: 0 })]))
    );
    const perRound = Math.ceil(REQUESTS / ROUNDS);
    const spreadMs = arrivals === 'spread' ? FIRST_MS + (TOKENS - 1) * pace : 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of [...names.slice(r % 3), ...names.slice(0, r % 3)]) {
        const p = await phase(targets[name], perRound, spreadMs);
        all[name].results.push(...p.results);
        all[name].errors += p.errors;
        all[name].wallMs += p.wallMs;
        console.log(
          `pace ${pace} ms, ${arrivals}, round ${r + 1} ${name}: ${p.results.length} ok, ${p.errors} errors, TTFT median ${median(p.results.map((x) => x.ttft)).toFixed(2)} ms (upstream wait taken out ${median(p.results.map((x) => x.transit)).toFixed(2)}), ${((p.results.length * TOKENS) / (p.wallMs / 1000)).toFixed(0)} tokens/s`,
        );
      }
    }
    runs.push({ pace, arrivals, model: CHAT_MODELS[pi], d: summary(all.direct), r: summary(all.relay), g: summary(all.gateway) });
  }
}
const load1 = loadAverage();
await Promise.all([stopChild(gateway.child), stopChild(relay.child), stopChild(fake.child)]);
await agent.close();

/** @param {boolean} ok */
const met = (ok) => (ok ? '**met**' : '**MISSED**');
const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
/** @param {string} name @param {ReturnType<typeof summary>} s */
const row = (name, s) =>
  `| ${name} | ${s.n} | ${s.errors} | ${s.ttftMedian.toFixed(2)} | ${s.ttftP99.toFixed(2)} | ${s.waitMedian.toFixed(2)} | ${s.inLegMedian.toFixed(2)} | ${s.outLegMedian.toFixed(2)} | ${s.transitMedian.toFixed(2)} | ${s.totalMedian.toFixed(1)} | ${s.streamRate.toFixed(0)} | ${s.throughput.toFixed(0)} |`;
const lines = [
  '## Chat streaming through mediagate vs straight to the upstream',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.cpus().length} (${cpu}); Node ${process.version}; 1-minute load average ${load0.toFixed(2)} before, ${load1.toFixed(2)} after. ` +
    `Four processes on this machine: the fake OpenAI-compatible upstream (\`bench/fake-openai.js\`: ${TOKENS} content chunks per reply, the first ${FIRST_MS} ms after the request, then one per pace interval), ` +
    'the gateway (`bench/gateway-server.js`, `MEDIAGATE_CHAT_UPSTREAM_*` pointing at the fake, workers off, logs silent), a bare pass-through relay to the fake (`bench/bare-relay.js`: no auth, no parsing; what one more process and two more loopback hops cost at the least) and the client (`bench/chat.js`, undici). ' +
    (PIN
      ? 'Cores: the gateway and the relay on core 1, the client and the fake upstream on core 0 (`BENCH_CHAT_PIN=1`), as when the gateway has a machine of its own. '
      : 'Cores: all processes share both cores (no pinning). ') +
    `Per pace and arrival pattern, ${REQUESTS} streamed completions per target at concurrency ${CONCURRENCY}, in ${ROUNDS} rotating rounds (after ${WARMUP} warm-up requests each per pace). ` +
    "Arrivals `spread`: the clients start a tenth of a reply apart, so requests arrive one at a time, as independent users' would (the targets are judged on these); `burst`: all start at once and, every reply being the same length, stay in lock step, so every request arrives in a burst of ten and waits for those ahead of it (a worst case, for comparison). " +
    "TTFT is from sending the request to receiving the first content token. The fake upstream notes on the machine's monotonic clock when each request reached it and when it wrote the first token: its own wait (nominally the first-token delay, give or take its timer's 1 ms granularity) is taken out of each TTFT, leaving the time spent on the way in (client sends -> upstream has the request) and on the way out (upstream writes the first token -> client has it); their sum is what a hop can add. Throughput is tokens received per second of wall time over all rounds of a target; per-stream rate is tokens/s from the first to the last token of one reply.",
  '',
  '| Pace | Arrivals | Target | Requests | Errors | TTFT median ms | TTFT p99 ms | Upstream wait median ms | Way in median ms | Way out median ms | TTFT - upstream wait, median ms | Last token median ms | Per-stream tokens/s (median) | Throughput tokens/s |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];
const verdicts = ['', '| Pace | Arrivals | Target | Measured | Result |', '|---|---|---|---:|---|'];
/** @param {number} x */
const signed = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
for (const r of runs) {
  const label = `${r.pace} ms/token (${(1000 / r.pace).toFixed(0)} tokens/s per stream) | ${r.arrivals}`;
  const judged = r.arrivals === 'spread';
  lines.push(`| ${label} |${row('direct to the fake upstream', r.d).slice(1)}`);
  lines.push(`| ${label} |${row('through the bare relay', r.r).slice(1)}`);
  lines.push(`| ${label} |${row(`through mediagate (\`${r.model}\`)`, r.g).slice(1)}`);
  const added = r.g.transitMedian - r.d.transitMedian;
  const rawAdded = r.g.ttftMedian - r.d.ttftMedian;
  verdicts.push(
    `| ${label} | (floor) bare relay's added TTFT median, upstream wait taken out | ${(r.r.transitMedian - r.d.transitMedian).toFixed(2)} ms | for comparison |`,
  );
  const ratio = r.g.throughput / r.d.throughput;
  verdicts.push(
    `| ${label} | added TTFT median <= ${TARGETS.addedTtftMs} ms (upstream wait taken out; way in ${signed(r.g.inLegMedian - r.d.inLegMedian)}, way out ${signed(r.g.outLegMedian - r.d.outLegMedian)}) | ${added.toFixed(2)} ms (p99: ${signed(r.g.transitP99 - r.d.transitP99)} ms) | ${judged ? met(added <= TARGETS.addedTtftMs) : 'for comparison'} |`,
  );
  verdicts.push(`| ${label} | added TTFT median, raw (the upstream's timer jitter left in) | ${rawAdded.toFixed(2)} ms | for comparison |`);
  verdicts.push(
    `| ${label} | mediagate's TTFT median over the bare relay's (upstream wait taken out) | ${(r.g.transitMedian - r.r.transitMedian).toFixed(2)} ms | for comparison |`,
  );
  verdicts.push(
    `| ${label} | token throughput >= ${TARGETS.throughputRatio}x direct | ${ratio.toFixed(3)}x | ${judged ? met(ratio >= TARGETS.throughputRatio) : 'for comparison'} |`,
  );
}
const section = [
  ...lines,
  ...verdicts,
  '',
  "The upstream paces the tokens, so throughput mostly shows that the gateway keeps up (each reply takes the upstream's time plus what the gateway adds); TTFT shows what one hop through the gateway (auth, validation, the upstream call, SSE writing) costs, on a machine whose cores the processes share. The bare relay row separates the two parts of the added TTFT: what any extra process costs here (its row minus direct) and what the work of mediagate itself costs (mediagate minus the relay).",
].join('\n');
console.log(`\n${section}`);
const errors = runs.reduce((a, r) => a + r.d.errors + r.r.errors + r.g.errors, 0);

if (!NO_WRITE) {
  writeDocSection('chat', section);
  console.log(`\nwrote the bench:chat section of ${path.relative(root, BENCHMARKS_DOC)}`);
}
process.exit(errors > 0 ? 1 : 0);
