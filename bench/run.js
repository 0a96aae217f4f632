// The benchmark suite (run by hand: `npm run bench`; never part of the tests).
//
// In one run it:
//   1. starts bench/bare-server.js (bare Fastify) and bench/gateway-server.js (the gateway from dist/,
//      workers off) as child processes, so the load generator (this process) and each server are
//      separate processes;
//   2. warms every endpoint up, then drives each with autocannon for BENCH_DURATION seconds at
//      BENCH_CONNECTIONS connections: GET /bare, GET /v1/result/{id}, POST /bare, POST /v1/pic/images;
//   3. times the sandbox image renderer directly (dist/providers/sandbox/image.js);
//   4. prints a markdown table and replaces the `bench:http` section of docs/BENCHMARKS.md.
//
// Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100), BENCH_WARMUP (s, default 3),
// BENCH_CPU_PROF=1 (gateway child runs with --cpu-prof; the profile goes to BENCH_PROF_DIR, default
// $TMPDIR/mediagate-bench-profiles; open it in Chrome DevTools or VS Code),
// BENCH_SKIP_RENDER=1 / BENCH_SKIP_HTTP=1 (leave a part out), BENCH_NO_WRITE=1 (do not touch the docs),
// BENCH_ONLY=poll,submit (a subset of bareGet,poll,barePost,submit; the docs are then left alone),
// BENCH_QUIET_WAIT (s, default 60: before each measured run, wait that long at most for other
// processes on the machine to use less than a quarter core; the report shows what they used anyway),
// BENCH_GATEWAY_WORKERS=1 (run the gateway with its in-process workers; default 0, see gateway-server.js).
// BENCH_GATEWAY_NODE_ARGS="--flag ..." (extra node options for the gateway process).
// BENCH_CONFIG=default: measure the gateway as `npm start` runs it (workers on, JSON access logs at
// info, written to a file as an operator's log collector would take them; only the per-key rate
// limits and the in-flight bound lifted) against its own targets (poll >= 0.75x, submit >= 0.5x,
// p99 < 10 ms); it writes the `bench:http-default` section. The renderer is left out.
// BENCH_STORE=postgres: the gateway on PostgreSQL (MEDIAGATE_DATABASE_URL set to a database created
// for each round on BENCH_POSTGRES_URL's server, default postgres://postgres@127.0.0.1:5432/test,
// and dropped after it), p99 target 20 ms; it writes the `bench:http-postgres` section (with
// BENCH_CONFIG=default, `bench:http-default-postgres`). The renderer is left out.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCHMARKS_DOC, writeDocSection } from './doc-section.js';
import {
  cannon,
  cpuDelta,
  cpuSnapshot,
  fmtInt,
  fmtMs,
  intEnv,
  loadAverage,
  machine,
  measureLoad,
  median,
  NOISE_CORES,
  probe,
  root,
  cleanUp,
  startChild,
  stopChildren,
  verdict,
  waitForQuiet,
} from './harness.js';
import { ADMIN_URL, createBenchDatabase, withClient } from './postgres-db.js';

/** `quiet` (workers off, logs silent: the HTTP path alone) or `default` (the configuration users run). */
const CONFIG = process.env.BENCH_CONFIG === 'default' ? 'default' : 'quiet';
/** BENCH_STORE: `sqlite` (default: a fresh data directory) or `postgres` (a fresh database on BENCH_POSTGRES_URL's server, see postgres-db.js). */
const STORE = process.env.BENCH_STORE || 'sqlite';
if (STORE !== 'sqlite' && STORE !== 'postgres') throw new Error(`BENCH_STORE must be sqlite or postgres, got "${STORE}"`);
const ON_POSTGRES = STORE === 'postgres';
/** BENCH_POSTGRES_OPTIONS: session settings for the gateway's connections, for experiments (e.g. `-c synchronous_commit=off`); the docs are then left alone. */
const PG_OPTIONS = process.env.BENCH_POSTGRES_OPTIONS ?? '';
/** @param {string} url */
const withSessionOptions = (url) => {
  if (!PG_OPTIONS) return url;
  const u = new URL(url);
  u.searchParams.set('options', PG_OPTIONS);
  return u.toString();
};
const SECTION = `${CONFIG === 'default' ? 'http-default' : 'http'}${ON_POSTGRES ? '-postgres' : ''}`;

const DURATION = intEnv('BENCH_DURATION', 10);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 100);
const WARMUP = intEnv('BENCH_WARMUP', 3, 0);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
/** BENCH_PIN=1: each server on core 1, the load generator alone on core 0 (re-runs itself under taskset); the docs are then left alone. */
const PIN = process.env.BENCH_PIN === '1';
if (PIN && process.env.BENCH_PINNED !== '1') {
  const { spawnSync } = await import('node:child_process');
  const { status } = spawnSync('taskset', ['-c', '0', process.execPath, fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(status ?? 1);
}
const SKIP_RENDER = process.env.BENCH_SKIP_RENDER === '1' || CONFIG === 'default' || ON_POSTGRES;
const SKIP_HTTP = process.env.BENCH_SKIP_HTTP === '1';
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
/** Comma-separated subset of bareGet,poll,barePost,submit (for profiling one path); the docs are then left alone. */
/** BENCH_GATEWAY_NODE_ARGS: extra node options for the gateway process (space-separated), e.g. V8 flags under study. */
const GATEWAY_NODE_ARGS = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
/**
 * BENCH_ROUNDS: how many times the whole HTTP set runs, each round with fresh servers (default 3 for
 * BENCH_CONFIG=default, 1 otherwise); targets are judged on the median round, all rounds are listed.
 */
const ROUNDS = intEnv('BENCH_ROUNDS', CONFIG === 'default' ? 3 : 1);

const TARGETS = {
  ...(CONFIG === 'default' ? { pollRatio: 0.75, submitRatio: 0.5 } : { pollRatio: 0.5, submitRatio: 0.25 }),
  // a network round trip to the database per request (issue 15): p99 < 20 ms on PostgreSQL
  p99Ms: ON_POSTGRES ? 20 : 10,
  renderMs: 100,
};
const PIC_BODY = JSON.stringify({ model: 'pic-2', prompt: 'a red fox', resolution: '2k', size: '16:9' });

// ---------------------------------------------------------------------------------------------
// HTTP load

/** @typedef {Awaited<ReturnType<typeof measureLoad>> & { replyBytes: number | undefined }} EndpointRow one endpoint's figures */
/** @typedef {{ bareGet?: EndpointRow, poll?: EndpointRow, barePost?: EndpointRow, submit?: EndpointRow }} Endpoints */
/**
 * One round of the HTTP set: a row per endpoint measured, the gateway's log size (BENCH_CONFIG=default)
 * and, on the round chosen as the median, every round (report() takes both out before listing the rows).
 * @typedef {Endpoints & { logs?: { bytes: number, lines: number }, rounds?: Round[] }} Round
 */
/**
 * One endpoint driven: its server, its request and (once probed) the size of its reply.
 * @typedef {{ id: keyof Endpoints, server: import('node:child_process').ChildProcess, name: string, url: string, method: string, headers: Record<string, string>, body?: string, replyBytes?: number }} Case
 */

/** @returns {Promise<Round>} */
async function httpBenchmarks() {
  const { child: bareChild, info: bare } = await startChild('bare-server.js', { pin: PIN });
  const db = ON_POSTGRES ? await createBenchDatabase() : undefined;
  const profDir = process.env.BENCH_PROF_DIR || path.join(os.tmpdir(), 'mediagate-bench-profiles');
  if (CPU_PROF) fs.mkdirSync(profDir, { recursive: true });
  const logFile = CONFIG === 'default' ? path.join(os.tmpdir(), `mediagate-bench-gateway-${process.pid}.log`) : undefined;
  const { child: gatewayChild, info: gw } = await startChild('gateway-server.js', {
    nodeArgs: [...GATEWAY_NODE_ARGS, ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])],
    pin: PIN,
    logFile,
    env: { ...process.env, ...(logFile && { BENCH_GATEWAY_CONFIG: 'default' }), ...(db && { MEDIAGATE_DATABASE_URL: withSessionOptions(db.url) }) },
  });
  const bareUrl = `http://127.0.0.1:${bare.port}`;
  const gwUrl = `http://127.0.0.1:${gw.port}`;
  const auth = { authorization: `Bearer ${gw.key}` };
  const json = { 'content-type': 'application/json' };

  /** @type {Case[]} */
  const allCases = [
    { id: 'bareGet', server: bareChild, name: 'GET /bare (bare Fastify)', url: `${bareUrl}/bare`, method: 'GET', headers: {} },
    { id: 'poll', server: gatewayChild, name: 'GET /v1/result/{id} (poll)', url: `${gwUrl}/v1/result/${gw.taskId}`, method: 'GET', headers: auth },
    { id: 'barePost', server: bareChild, name: 'POST /bare (bare Fastify, JSON body)', url: `${bareUrl}/bare`, method: 'POST', headers: json, body: PIC_BODY },
    {
      id: 'submit',
      server: gatewayChild,
      name: 'POST /v1/pic/images (submit)',
      url: `${gwUrl}/v1/pic/images`,
      method: 'POST',
      headers: { ...auth, ...json },
      body: PIC_BODY,
    },
  ];

  const cases = allCases.filter((c) => !ONLY || ONLY.has(c.id));
  if (cases.length === 0) throw new Error(`BENCH_ONLY matches none of ${allCases.map((c) => c.id).join(', ')}`);

  // Every endpoint must answer 2xx before any load is applied.
  for (const c of cases) {
    c.replyBytes = await probe(c.url, { method: c.method, headers: c.headers, ...(c.body && { body: c.body }) });
  }

  if (WARMUP > 0) {
    process.stderr.write(`warm-up: ${WARMUP} s per endpoint\n`);
    for (const c of cases) {
      await cannon({ url: c.url, method: c.method, headers: c.headers, body: c.body, duration: WARMUP, connections: CONNECTIONS });
    }
  }

  /** @type {Round} */
  const results = {};
  for (const c of cases) {
    results[c.id] = {
      ...(await measureLoad(c.name, c.server, {
        url: c.url,
        method: c.method,
        headers: c.headers,
        body: c.body,
        duration: DURATION,
        connections: CONNECTIONS,
      })),
      replyBytes: c.replyBytes,
    };
  }

  await stopChildren();
  await db?.drop();
  if (logFile) {
    const size = fs.statSync(logFile).size;
    const lineCount = fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length;
    results.logs = { bytes: size, lines: lineCount };
    fs.rmSync(logFile, { force: true });
  }
  if (CPU_PROF) {
    const profiles = fs
      .readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(profDir, f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    process.stderr.write(`gateway CPU profile: ${profiles[0] ?? '(none written)'} (pid ${gatewayChild.pid})\n`);
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Sandbox renderer

async function renderBenchmarks() {
  // the compiled renderer in dist/, typed as its source
  const { renderSandboxImage } = /** @type {typeof import('../src/providers/sandbox/image.js')} */ (
    await import(pathToFileURL(path.join(root, 'dist', 'providers', 'sandbox', 'image.js')).href)
  );
  const sizes = [
    { width: 1024, height: 1024, warm: 3, runs: 20 },
    { width: 2048, height: 1152, warm: 2, runs: 10 },
    { width: 4096, height: 2304, warm: 1, runs: 5 },
  ];
  const out = [];
  for (const s of sizes) {
    /** @type {import('../src/providers/sandbox/image.js').SandboxImageSpec} */
    const spec = { width: s.width, height: s.height, prompt: 'a red fox', seed: 'bench', format: 'png' };
    let bytes = 0;
    for (let i = 0; i < s.warm; i++) await renderSandboxImage(spec);
    await waitForQuiet(`render ${s.width}x${s.height}`);
    const before = cpuSnapshot(process.pid);
    const times = [];
    for (let i = 0; i < s.runs; i++) {
      const t0 = process.hrtime.bigint();
      const png = await renderSandboxImage(spec);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      bytes = png.length;
    }
    const cpu = cpuDelta(before, cpuSnapshot(process.pid));
    // Here the "server" is this process (the renderer runs in it), counted once.
    const other = cpu ? cpu.other : undefined;
    const row = { ...s, median: median(times), min: Math.min(...times), max: Math.max(...times), bytes, cpu: cpu?.server, other };
    process.stderr.write(
      `render ${s.width}x${s.height} png: median ${row.median.toFixed(1)} ms (min ${row.min.toFixed(1)}, max ${row.max.toFixed(1)}, ${s.runs} runs)\n`,
    );
    out.push(row);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Report

/**
 * The poll/bare GET ratio of a round (NaN when it lacks one).
 * @param {Round} r
 */
const pollRatioOf = (r) => (r.poll && r.bareGet ? r.poll.rps / r.bareGet.rps : Number.NaN);

/**
 * The round whose poll ratio is the median of all rounds (the one the targets are judged on), with the others attached.
 * @param {Round[]} rounds
 */
function medianRound(rounds) {
  if (rounds.length === 0) return undefined;
  const sorted = [...rounds].sort((a, b) => pollRatioOf(a) - pollRatioOf(b));
  const chosen = /** @type {Round} */ (sorted[Math.floor((sorted.length - 1) / 2)]);
  chosen.rounds = rounds;
  return chosen;
}

/** @typedef {Awaited<ReturnType<typeof renderBenchmarks>>[number]} RenderRow one size rendered */

/**
 * The section's markdown.
 * @param {Round | undefined} http the median round
 * @param {Awaited<ReturnType<typeof renderBenchmarks>> | undefined} render
 * @param {import('./harness.js').Machine} m
 */
function report(http, render, m) {
  const lines = [];
  const rounds = http?.rounds ?? [];
  if (http) delete http.rounds;
  const logs = http?.logs;
  if (http) delete http.logs;
  const title = CONFIG === 'default' ? 'HTTP path in the default configuration' : ON_POSTGRES ? 'HTTP path' : 'HTTP path and sandbox renderer';
  lines.push(`## ${title}${ON_POSTGRES ? ' on PostgreSQL' : ''}`);
  lines.push('');
  const gatewayConfig =
    CONFIG === 'default'
      ? 'gateway as `npm start` runs it (in-process worker on, sandbox timing `fast`, JSON logs at `info` with one access-log line per ' +
        `request, written to a file${logs ? `: ${fmtInt(logs.lines)} lines, ${fmtInt(logs.bytes)} bytes in this run` : ''}); only the per-key rate limits and ` +
        'the in-flight bound are off, since one key drives all the load'
      : 'gateway with `MEDIAGATE_WORKERS=0` (no image rendering competes with the HTTP path; submitted tasks stay queued), `MEDIAGATE_LOG_LEVEL=silent`';
  lines.push(
    `Run ${m.date}; \`nproc\` ${m.nproc} (${m.cpu}); Node ${m.node}; autocannon, ${CONNECTIONS} connections, ` +
      `${DURATION} s per endpoint after a ${WARMUP} s warm-up each; ${gatewayConfig}; ` +
      `${ON_POSTGRES ? `\`MEDIAGATE_DATABASE_URL\` set to a fresh database (\`BENCH_STORE=postgres\`) on the local PostgreSQL ${m.postgres} server (the store's pool of 10 connections; the database dropped after the run)` : 'fresh SQLite data directory'}. ` +
      `One run; load generator${ON_POSTGRES ? ', PostgreSQL' : ''} and both servers share the same ${m.nproc}-core machine ` +
      `(1-minute load average ${m.loadBefore} before the run, ${m.loadAfter} after; other work on the machine shows up as noise).`,
  );
  lines.push('');
  if (http) {
    lines.push(
      `| Endpoint | Reply bytes | Requests/s (mean) | p50 ms | p99 ms | max ms | Requests | Errors | Timeouts | Non-2xx | CPU cores: server / load gen / ${ON_POSTGRES ? 'PostgreSQL / ' : ''}other | Server CPU µs/request |`,
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    /** @param {EndpointRow['cpu']} c */
    const cores = (c) =>
      c ? `${c.server.toFixed(2)} / ${c.loadgen.toFixed(2)} / ${ON_POSTGRES ? `${c.database.toFixed(2)} / ` : ''}${c.other.toFixed(2)}` : 'n/a';
    // only the endpoints' rows are left in `http` (rounds and logs taken out above)
    for (const r of /** @type {EndpointRow[]} */ (Object.values(http))) {
      lines.push(
        `| ${r.name} | ${r.replyBytes} | ${fmtInt(r.rps)} | ${fmtMs(r.p50)} | ${fmtMs(r.p99)} | ${fmtMs(r.max)} | ${fmtInt(r.total)} | ${r.errors} | ${r.timeouts} | ${r.non2xx} | ${cores(r.cpu)} | ${r.cpuUsPerReq === undefined ? 'n/a' : r.cpuUsPerReq.toFixed(0)} |`,
      );
    }
    lines.push('');
    const noisy = /** @type {EndpointRow[]} */ (Object.values(http)).filter((r) => r.cpu && r.cpu.other >= NOISE_CORES);
    lines.push(
      noisy.length === 0
        ? `Other processes used less than ${NOISE_CORES} core during every HTTP run.`
        : `**Noise warning:** other processes used ${NOISE_CORES} core or more during: ${noisy.map((r) => `${r.name} (${/** @type {NonNullable<EndpointRow['cpu']>} */ (r.cpu).other.toFixed(2)})`).join(', ')}; those figures (and ratios built on them) are depressed.`,
    );
    lines.push('');
  }
  if (http?.poll && http.bareGet && http.submit && http.barePost) {
    const pollRatio = http.poll.rps / http.bareGet.rps;
    const submitRatio = http.submit.rps / http.barePost.rps;
    /** @param {EndpointRow} gw @param {EndpointRow} bare */
    const cpuRatio = (gw, bare) => (gw.cpuUsPerReq && bare.cpuUsPerReq ? `${(bare.cpuUsPerReq / gw.cpuUsPerReq).toFixed(3)}x` : 'n/a');
    lines.push('| Target | Measured | Result | Cross-check: same ratio from server CPU per request |');
    lines.push('|---|---:|---|---:|');
    lines.push(
      `| poll >= ${TARGETS.pollRatio}x bare GET (requests/s) | ${pollRatio.toFixed(3)}x | ${verdict(pollRatio >= TARGETS.pollRatio)} | ${cpuRatio(http.poll, http.bareGet)} |`,
    );
    lines.push(
      `| submit >= ${TARGETS.submitRatio}x bare POST (requests/s) | ${submitRatio.toFixed(3)}x | ${verdict(submitRatio >= TARGETS.submitRatio)} | ${cpuRatio(http.submit, http.barePost)} |`,
    );
    lines.push(`| poll p99 < ${TARGETS.p99Ms} ms at ${CONNECTIONS} connections | ${fmtMs(http.poll.p99)} ms | ${verdict(http.poll.p99 < TARGETS.p99Ms)} | |`);
    // The default configuration's targets (issue 11) bound the poll's p99 only; its submit p99 is reported.
    lines.push(
      CONFIG === 'default'
        ? `| submit p99 at ${CONNECTIONS} connections (reported, not a target here) | ${fmtMs(http.submit.p99)} ms | - | |`
        : `| submit p99 < ${TARGETS.p99Ms} ms at ${CONNECTIONS} connections | ${fmtMs(http.submit.p99)} ms | ${verdict(http.submit.p99 < TARGETS.p99Ms)} | |`,
    );
    if (render) {
      const r1k = /** @type {RenderRow} */ (render[0]); // the first of the fixed sizes, 1024x1024
      lines.push(`| render 1024x1024 PNG median <= ${TARGETS.renderMs} ms | ${r1k.median.toFixed(1)} ms | ${verdict(r1k.median <= TARGETS.renderMs)} | |`);
    }
  }
  if (rounds.length > 1) {
    lines.push('');
    lines.push(`${rounds.length} rounds, each with fresh servers; the tables above are the round with the median poll ratio, on which the targets are judged:`);
    lines.push('');
    lines.push('| Round | poll / bare GET | submit / bare POST | poll p99 ms | submit p99 ms |');
    lines.push('|---:|---:|---:|---:|---:|');
    rounds.forEach((r, i) => {
      const submitRatio = r.submit && r.barePost ? (r.submit.rps / r.barePost.rps).toFixed(3) : 'n/a';
      lines.push(
        `| ${i + 1}${r === http ? ' (median)' : ''} | ${pollRatioOf(r).toFixed(3)}x | ${submitRatio}x | ${r.poll ? fmtMs(r.poll.p99) : 'n/a'} | ${r.submit ? fmtMs(r.submit.p99) : 'n/a'} |`,
      );
    });
  }
  if (http) {
    const bad = /** @type {EndpointRow[]} */ (Object.values(http)).filter((r) => r.errors || r.timeouts || r.non2xx);
    lines.push('');
    lines.push(
      bad.length === 0 ? 'No errors, timeouts or non-2xx replies in any run.' : `Errors / timeouts / non-2xx in: ${bad.map((r) => r.name).join(', ')}.`,
    );
    lines.push('');
    lines.push(
      `With ${CONNECTIONS} connections always busy, mean latency = ${CONNECTIONS} / throughput (Little's law), so a p99 under ` +
        `${TARGETS.p99Ms} ms needs a mean well under that, i.e. well over ${fmtInt(CONNECTIONS / (TARGETS.p99Ms / 1000))} requests/s from one process; ` +
        'compare the bare Fastify rows for what this machine allows at all.',
    );
    const capped = /** @type {EndpointRow[]} */ (Object.values(http)).filter((r) => r.cpu && r.cpu.loadgen >= 0.9);
    if (capped.length > 0) {
      lines.push(`The load generator used 0.9 core or more during: ${capped.map((r) => r.name).join(', ')}; there it may be the limit, not the server.`);
    }
    lines.push('');
  }
  if (render) {
    lines.push(
      'Sandbox image renderer, `renderSandboxImage({prompt: "a red fox", seed: "bench", format: "png"})` called directly (in the load-generator process, no HTTP load running):',
    );
    lines.push('');
    lines.push('| Size | Runs (after warm-up) | Median ms | Min ms | Max ms | PNG bytes | CPU cores: renderer / other |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of render) {
      // `other` is set whenever `cpu` is (both from one CPU delta)
      const cores = r.cpu === undefined ? 'n/a' : `${r.cpu.toFixed(2)} / ${/** @type {number} */ (r.other).toFixed(2)}`;
      lines.push(
        `| ${r.width}x${r.height} | ${r.runs} (${r.warm}) | ${r.median.toFixed(1)} | ${r.min.toFixed(1)} | ${r.max.toFixed(1)} | ${fmtInt(r.bytes)} | ${cores} |`,
      );
    }
    const noisy = render.filter((r) => r.other !== undefined && r.other >= NOISE_CORES);
    if (noisy.length > 0) {
      lines.push('');
      lines.push(
        `**Noise warning:** other processes used ${NOISE_CORES} core or more while rendering ${noisy.map((r) => `${r.width}x${r.height} (${/** @type {number} */ (r.other).toFixed(2)})`).join(', ')}; those times are inflated.`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main() {
  /** @type {import('./harness.js').Machine} */
  const m = machine();
  if (ON_POSTGRES) m.postgres = await withClient(ADMIN_URL, async (c) => (await c.query('SHOW server_version')).rows[0].server_version.split(' ')[0]);
  process.stderr.write(`bench: nproc ${m.nproc}, node ${m.node}, ${CONNECTIONS} connections, ${DURATION} s, store ${STORE}\n`);
  /** @type {Round[]} */
  const rounds = [];
  for (let i = 0; i < (SKIP_HTTP ? 0 : ROUNDS); i++) {
    if (ROUNDS > 1) process.stderr.write(`round ${i + 1} of ${ROUNDS}\n`);
    rounds.push(await httpBenchmarks());
  }
  const http = medianRound(rounds);
  const render = SKIP_RENDER ? undefined : await renderBenchmarks();
  m.loadAfter = loadAverage();
  const section = report(http, render, m);
  process.stdout.write(`\n${section}\n`);
  if (!NO_WRITE && !ONLY && !PIN && !PG_OPTIONS && http && (render || CONFIG === 'default' || ON_POSTGRES)) {
    writeDocSection(SECTION, section);
    process.stderr.write(`wrote ${path.relative(root, BENCHMARKS_DOC)}\n`);
  }
}

try {
  await main();
} catch (err) {
  console.error('bench failed:', err);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
