// Query latency against a small and a big tasks table (issue 15): does a poll, a claim or an
// in-flight count get slower when the store holds 1,000,000 tasks instead of 10,000? Run by hand
// after `npm run build`: `node bench/table-size.js` (never part of the tests).
//
// Per store (PostgreSQL: a fresh database on BENCH_POSTGRES_URL's server, dropped at the end;
// SQLite: the gateway's fresh data directory, removed at the end):
//   1. starts bench/gateway-server.js (workers off, logs silent) on that store: it creates the
//      measured key and one pic task, the template of every row filled in;
//   2. adds 7 more keys, then fills the tasks table up to each size in BENCH_TABLE_SIZES with one
//      INSERT ... SELECT over a series (PostgreSQL: generate_series, with the notify trigger off
//      for the filling session, as for a bulk load; SQLite: a recursive CTE), rows like the
//      gateway writes them: ids growing with creation time (G81), the 8 keys in turn, every
//      status (84% completed with a result, 8% failed, 4% cancelled, 2.5% queued, 1.5% processing
//      under a live lease), then (PostgreSQL) VACUUM ANALYZE, as its autovacuum would, and a
//      checkpoint (the fill's pages written out before anything is measured); SQLite gets no
//      ANALYZE, since the gateway never runs one;
//   3. at each size: polls (GET /v1/result/{id}) with autocannon, each request for one of
//      BENCH_POLL_IDS task ids of the measured key drawn at random from the whole table; then,
//      with no HTTP load, times BENCH_CLAIM_RUNS calls of the store's claim of the next queued
//      task and BENCH_QUERY_RUNS of its in-flight count of the measured key (LIMIT 40: the same rows at both sizes),
//      through the compiled store (dist/) on a connection of this process.
// Targets: poll requests/s and p99, claim and in-flight median at the biggest size within 1.2x of
// the smallest. Writes the `bench:table-size` section of docs/BENCHMARKS.md.
//
// Settings: BENCH_TABLE_STORES (default postgres,sqlite), BENCH_TABLE_SIZES (default
// 10000,1000000), BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100), BENCH_WARMUP
// (s, default 3), BENCH_POLL_IDS (default 1000), BENCH_QUERY_RUNS (in-flight counts, default 500),
// BENCH_CLAIM_RUNS (default 200),
// BENCH_QUIET_WAIT (see harness.js), BENCH_NO_WRITE=1 (leave the docs alone).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { writeDocSection } from './doc-section.js';
import {
  cannon,
  cleanUp,
  fmtInt,
  fmtMs,
  intEnv,
  loadAverage,
  machine,
  measureLoad,
  median,
  NOISE_CORES,
  onCleanUp,
  startChild,
  stopChild,
  verdict,
} from './harness.js';
import { ADMIN_URL, createBenchDatabase, withClient } from './postgres-db.js';

const STORES = (process.env.BENCH_TABLE_STORES || 'postgres,sqlite').split(',').map((s) => s.trim());
for (const s of STORES) if (s !== 'postgres' && s !== 'sqlite') throw new Error(`BENCH_TABLE_STORES: unknown store "${s}" (postgres, sqlite)`);
const SIZES = (process.env.BENCH_TABLE_SIZES || '10000,1000000').split(',').map(Number);
if (SIZES.some((n) => !Number.isInteger(n) || n < 100) || SIZES.some((n, i) => i > 0 && n <= Number(SIZES[i - 1]))) {
  throw new Error('BENCH_TABLE_SIZES must be increasing whole numbers >= 100');
}
const DURATION = intEnv('BENCH_DURATION', 10);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 100);
const WARMUP = intEnv('BENCH_WARMUP', 3, 0);
const POLL_IDS = intEnv('BENCH_POLL_IDS', 1000);
const QUERY_RUNS = intEnv('BENCH_QUERY_RUNS', 500);
/** Claims timed per size: each takes a queued task for good, and the smallest table has 2.5% queued. */
const CLAIM_RUNS = intEnv('BENCH_CLAIM_RUNS', 200);
const NO_WRITE = process.env.BENCH_NO_WRITE === '1';
/** How much slower the biggest table may be than the smallest. */
const FLAT = 1.2;
/** Keys owning the filled rows in turn: the gateway's (measured) key and this many others. */
const OTHER_KEYS = 7;
/** The in-flight count's bound (MEDIAGATE_MAX_TASKS_IN_FLIGHT's default). */
/**
 * The in-flight count's LIMIT: at most what the measured key has in flight in the smallest table
 * (10,000 rows: 4% in flight over 8 keys, 50), so both sizes count the same number of rows and only
 * the table's size differs. (The default bound's LIMIT 500 reads at most 500 index entries of the
 * key whatever the table's size; the count grows with the key's tasks in flight, not the table.)
 */
const IN_FLIGHT_UP_TO = 40;

// ---------------------------------------------------------------------------------------------
// Filling: one set of rules, written out in each store's SQL

/** Row g (1-based) of the filled table: its status by g mod 200. */
const STATUS_SHARES = [
  ['completed', 168],
  ['failed', 16],
  ['cancelled', 8],
  ['queued', 5],
  ['processing', 3],
];
/** SQL CASE giving row `g`'s status (the same text in both dialects). */
const statusCase = (() => {
  let upTo = 0;
  const arms = STATUS_SHARES.map(([status, share]) => {
    upTo += Number(share);
    return `WHEN g % 200 < ${upTo} THEN '${status}'`;
  });
  return `CASE ${arms.join(' ')} END`;
})();
const RESULT = JSON.stringify({ files: [{ name: 'image.png', contentType: 'image/png', bytes: 223_084, width: 2048, height: 1152 }] });
const ERROR = 'upstream_error: the provider reported a failure';
/** Row g was created at base + g * STEP_MS: 1,000,000 tasks over the 23 days before the run. */
const STEP_MS = 2000;
const DAY_MS = 86_400_000;

/** @typedef {'postgres' | 'sqlite'} Dialect */

/**
 * The columns every filled row sets, in INSERT order, and their value expressions (s: status, c: created_at).
 * @param {Dialect} dialect
 * @param {number} now ms
 */
const FILL_COLUMNS = (dialect, now) => {
  const id =
    dialect === 'postgres'
      ? "'task_' || lpad(to_hex(c), 11, '0') || substr(md5(g::text || random()::text), 1, 22)"
      : "printf('task_%011x', c) || substr(lower(hex(randomblob(11))), 1, 22)";
  const finished = "s IN ('completed', 'failed', 'cancelled')";
  return {
    id,
    owner_key_id: 'k.id',
    family: 't.family',
    form: 't.form',
    model: 't.model',
    provider: 't.provider',
    request: 't.request',
    status: 's',
    progress: "CASE s WHEN 'completed' THEN 100 WHEN 'processing' THEN 40 ELSE 0 END",
    result: `CASE WHEN s = 'completed' THEN '${RESULT}' END`,
    error: `CASE WHEN s = 'failed' THEN '${ERROR}' END`,
    amount: 't.amount',
    created_at: 'c',
    updated_at: 'c + 9000',
    started_at: "CASE WHEN s <> 'queued' THEN c + 1000 END",
    finished_at: `CASE WHEN ${finished} THEN c + 9000 END`,
    attempts: "CASE WHEN s = 'queued' THEN 0 ELSE 1 END",
    lease_owner: "CASE WHEN s = 'processing' THEN 'worker_fill' END",
    lease_expires_at: `CASE WHEN s = 'processing' THEN ${now + DAY_MS} END`,
    run_after: '0',
    expires_at: `CASE WHEN ${finished} THEN ${now + 7 * DAY_MS} END`,
    vtime: 'g',
  };
};

/**
 * The INSERT ... SELECT adding rows `$from`..`$to` like the template task `$template`, in
 * `dialect`, created from `base` on, finished ones expiring a week after `now` (the parameters are
 * spelt `$name` and bound by each store's query function).
 * @param {Dialect} dialect
 * @param {number} now ms
 * @param {number} base ms
 */
function fillSql(dialect, now, base) {
  const cols = FILL_COLUMNS(dialect, now);
  const names = Object.keys(cols).join(', ');
  const values = Object.values(cols).join(', ');
  if (dialect === 'postgres') {
    return `INSERT INTO tasks (${names})
SELECT ${values}
FROM generate_series($from::bigint, $to::bigint) AS g
CROSS JOIN (SELECT * FROM tasks WHERE id = $template) AS t
CROSS JOIN LATERAL (SELECT ${statusCase} AS s, ${base} + g * ${STEP_MS} AS c) AS r
JOIN (SELECT id, (row_number() OVER (ORDER BY id)) - 1 AS i, count(*) OVER () AS n FROM api_keys) AS k ON k.i = g % k.n`;
  }
  return `WITH RECURSIVE series(g) AS (SELECT $from UNION ALL SELECT g + 1 FROM series WHERE g < $to),
rows AS (SELECT g, ${statusCase} AS s, ${base} + g * ${STEP_MS} AS c FROM series),
k AS (SELECT id, (row_number() OVER (ORDER BY id)) - 1 AS i, count(*) OVER () AS n FROM api_keys)
INSERT INTO tasks (${names})
SELECT ${values}
FROM rows CROSS JOIN (SELECT * FROM tasks WHERE id = $template) AS t JOIN k ON k.i = rows.g % k.n`;
}

/**
 * The store under test, seen from this process: SQL for filling and sampling, and the compiled
 * store's own claim and in-flight count for timing.
 * @typedef {{
 *   query: (sql: string, params: Record<string, unknown>) => Promise<Array<Record<string, unknown>>>,
 *   fill: (template: string, from: number, to: number, times: { now: number, base: number }) => Promise<void>,
 *   analyze: () => Promise<void>,
 *   explain?: (what: 'poll' | 'claim' | 'count', values: unknown[]) => Promise<string[]>,
 *   store: import('../src/store/types.js').Store,
 *   close: () => Promise<void>,
 * }} Direct
 */

/**
 * `$name` parameters as `$1..` (PostgreSQL) or `@name` (better-sqlite3).
 * @param {string} sql
 * @param {Record<string, unknown>} params
 */
function bindPostgres(sql, params) {
  /** @type {unknown[]} */
  const values = [];
  /** @type {Map<string, number>} */
  const index = new Map();
  const text = sql.replace(/\$([a-z]+)/g, (_, name) => {
    if (!(name in params)) throw new Error(`no value for $${name}`);
    if (!index.has(name)) index.set(name, values.push(params[name]));
    return `$${index.get(name)}`;
  });
  return { text, values };
}

/**
 * @param {string} url the bench database
 * @returns {Promise<Direct>}
 */
async function openPostgres(url) {
  const client = new pg.Client({ connectionString: url });
  // ended by the server when the database is dropped under it (an interrupted run): not a crash
  client.on('error', (err) => {
    process.stderr.write(`table-size: connection to the bench database lost (${err.message})\n`);
  });
  await client.connect();
  const { openPostgresStore } = /** @type {typeof import('../src/store/postgres/index.js')} */ (
    await import(new URL('../dist/store/postgres/index.js', import.meta.url).href)
  );
  const { BY_KEY_HASH_SQL, CLAIM, IN_FLIGHT_SQL } = /** @type {typeof import('../src/store/postgres/task-store.js')} */ (
    await import(new URL('../dist/store/postgres/task-store.js', import.meta.url).href)
  );
  const store = await openPostgresStore({ url });
  /** @type {Direct['query']} */
  const query = async (sql, params) => {
    const { text, values } = bindPostgres(sql, params);
    return (await client.query(text, values)).rows;
  };
  return {
    query,
    fill: async (template, from, to, { now, base }) => {
      // a bulk load: the per-row notify trigger is not what is measured, and its 1,000,000
      // notifications would reach the gateway's LISTEN connection at commit
      await client.query('SET session_replication_role = replica');
      try {
        await query(fillSql('postgres', now, base), { template, from, to });
      } finally {
        await client.query('RESET session_replication_role');
      }
    },
    // then a checkpoint: the fill's dirty pages are written out now, not by a checkpoint competing
    // with the measured commits (the claim's) for the disk
    analyze: async () => {
      await client.query('VACUUM ANALYZE tasks');
      await client.query('CHECKPOINT').catch((err) => {
        process.stderr.write(`  CHECKPOINT refused (${err.message}); the fill's pages may be written during the measurements\n`);
      });
    },
    // the store's own statements, as the gateway runs them
    explain: async (what, values) => {
      const sql = what === 'poll' ? BY_KEY_HASH_SQL : what === 'claim' ? CLAIM.one : IN_FLIGHT_SQL;
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, values);
      return rows.map((r) => String(r['QUERY PLAN']));
    },
    store,
    close: async () => {
      await store.close();
      await client.end();
    },
  };
}

/**
 * @param {string} file the gateway's database file
 * @returns {Promise<Direct>}
 */
async function openSqlite(file) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  const { openSqliteStore } = /** @type {typeof import('../src/store/sqlite/open.js')} */ (
    await import(new URL('../dist/store/sqlite/open.js', import.meta.url).href)
  );
  const store = openSqliteStore(file);
  const named = (/** @type {string} */ sql) => sql.replace(/\$([a-z]+)/g, '@$1');
  return {
    query: async (sql, params) => {
      const stmt = db.prepare(named(sql));
      const args = Object.keys(params).length > 0 ? [params] : [];
      if (!stmt.reader) {
        stmt.run(...args);
        return [];
      }
      return /** @type {Array<Record<string, unknown>>} */ (stmt.all(...args));
    },
    fill: async (template, from, to, { now, base }) => {
      db.prepare(named(fillSql('sqlite', now, base))).run({ template, from, to });
    },
    analyze: async () => {
      // no ANALYZE here: the gateway never runs it on SQLite, so its statements must be fast
      // without statistics (with them, a claim's plan hid a sort of every queued task)
      db.pragma('wal_checkpoint(TRUNCATE)'); // the fill's pages into the database file now, as on PostgreSQL
    },
    store,
    close: async () => {
      await store.close();
      db.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

/** An API key's stored hash, as the gateway computes it. */
const { hashApiKey } = /** @type {typeof import('../src/auth/keys.js')} */ (await import(new URL('../dist/auth/keys.js', import.meta.url).href));

/**
 * The indexes a plan reads and its execution time, e.g. `tasks_pkey, api_keys_hash_key; 0.04 ms`.
 * @param {string[]} lines the plan's lines
 */
function planSummary(lines) {
  const indexes = [...new Set(lines.flatMap((l) => [...l.matchAll(/(?:Index|Index Only) Scan(?: Backward)? using (\S+)/g)].map((m) => m[1])))];
  const seq = lines.some((l) => /Seq Scan on tasks/.test(l)) ? ['Seq Scan on tasks'] : [];
  const time = lines.map((l) => /Execution Time: ([\d.]+) ms/.exec(l)?.[1]).find(Boolean);
  return `${[...indexes, ...seq].join(', ') || 'no index'}; ${time ?? '?'} ms`;
}

/**
 * Times `runs` sequential calls of `fn`: median and p99 in ms.
 * @param {number} runs
 * @param {(i: number) => Promise<unknown>} fn
 */
async function timeCalls(runs, fn) {
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: median(times), p99: Number(times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]) };
}

/**
 * Every size of one store: fill, poll under load, time the claim and the in-flight count.
 * @param {string} kind `postgres` or `sqlite`
 */
async function measureStore(kind) {
  const db = kind === 'postgres' ? await createBenchDatabase() : undefined;
  const { child, info } = await startChild('gateway-server.js', { env: { ...process.env, ...(db && { MEDIAGATE_DATABASE_URL: db.url }) } });
  if (!info.key || !info.taskId || !info.dataDir) throw new Error('gateway-server: incomplete startup line');
  const dataDir = info.dataDir;
  // the gateway removes its data directory when it stops; this is for when it cannot
  const forgetDir = onCleanUp(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const direct = kind === 'postgres' && db ? await openPostgres(db.url) : await openSqlite(path.join(dataDir, 'mediagate.db'));
  const forgetDirect = onCleanUp(() => direct.close());
  const rows = [];
  try {
    const [template] = await direct.query('SELECT owner_key_id, provider FROM tasks WHERE id = $template', { template: info.taskId });
    if (!template) throw new Error("the gateway's task is not in the table");
    const keyId = String(template.owner_key_id);
    for (let i = 0; i < OTHER_KEYS; i++) {
      const id = `key_fill${i}`;
      await direct.query('INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES ($id, $name, $prefix, $hash, $now)', {
        id,
        name: `fill ${i}`,
        prefix: 'mg_fill',
        hash: randomBytes(32).toString('hex'),
        now: Date.now(),
      });
    }
    const now = Date.now();
    const base = now - Number(SIZES[SIZES.length - 1]) * STEP_MS - DAY_MS;
    let count = 1; // the gateway's own task
    const baseUrl = `http://127.0.0.1:${info.port}`;
    const headers = { authorization: `Bearer ${info.key}` };
    for (const size of SIZES) {
      const t0 = Date.now();
      await direct.fill(info.taskId, count, size - 1, { now, base });
      count = size;
      await direct.analyze();
      const n = (await direct.query('SELECT count(*) AS n FROM tasks', {}))[0]?.n;
      const fillSecs = (Date.now() - t0) / 1000;
      process.stderr.write(`${kind}: ${fmtInt(Number(n))} tasks (filled and analysed in ${fillSecs.toFixed(1)} s)\n`);

      const ids = (await direct.query(`SELECT id FROM tasks WHERE owner_key_id = $key ORDER BY random() LIMIT ${POLL_IDS}`, { key: keyId })).map((r) =>
        String(r.id),
      );
      let next = 0;
      /** @type {import('autocannon').RequestSpec[]} */
      const requests = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/v1/result/${ids[next++ % ids.length]}` }) }];
      const res = await fetch(`${baseUrl}/v1/result/${ids[0]}`, { headers });
      if (res.status !== 200) throw new Error(`poll answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      if (WARMUP > 0) await cannon({ url: baseUrl, headers, requests, duration: WARMUP, connections: CONNECTIONS });
      const poll = await measureLoad(`${kind} ${fmtInt(size)}: poll`, child, { url: baseUrl, headers, requests, duration: DURATION, connections: CONNECTIONS });

      const provider = String(template.provider);
      let claimed = 0;
      const claim = await timeCalls(CLAIM_RUNS, async () => {
        const at = Date.now();
        if (await direct.store.tasks.claimNext([provider], 'worker_bench', at, at + DAY_MS)) claimed++;
      });
      if (claimed !== CLAIM_RUNS) throw new Error(`claimed ${claimed} of ${CLAIM_RUNS} (too few queued tasks for BENCH_CLAIM_RUNS)`);
      let inFlight = 0;
      const count500 = await timeCalls(QUERY_RUNS, async () => {
        inFlight = await direct.store.tasks.countInFlight(keyId, IN_FLIGHT_UP_TO);
      });
      process.stderr.write(
        `  claim median ${claim.median.toFixed(3)} ms (p99 ${claim.p99.toFixed(3)}); in-flight count (${inFlight}) median ${count500.median.toFixed(3)} ms (p99 ${count500.p99.toFixed(3)})\n`,
      );
      /** @type {Record<string, string> | undefined} */
      let plans;
      if (direct.explain) {
        plans = {};
        const at = Date.now();
        const asked = { poll: [ids[0], hashApiKey(info.key)], claim: [provider, at, 'worker_bench', at + DAY_MS, at], count: [keyId, IN_FLIGHT_UP_TO] };
        for (const [what, values] of Object.entries(asked)) {
          const lines = await direct.explain(/** @type {'poll' | 'claim' | 'count'} */ (what), values);
          process.stderr.write(`  EXPLAIN ANALYZE ${what}:\n${lines.map((l) => `    ${l}`).join('\n')}\n`);
          plans[what] = planSummary(lines);
        }
      }
      rows.push({ kind, size, fillSecs, poll, claim, count: count500, inFlight, plans });
    }
  } finally {
    forgetDirect();
    await direct.close();
    await stopChild(child);
    forgetDir();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db?.drop();
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Report

/**
 * The section's markdown.
 * @param {Awaited<ReturnType<typeof measureStore>>} rows
 * @param {import('./harness.js').Machine} m
 */
function report(rows, m) {
  const lines = ['## Query latency: 10,000 vs 1,000,000 stored tasks (bench/table-size.js)', ''];
  lines.push(
    `Run ${m.date}; \`nproc\` ${m.nproc} (${m.cpu}); Node ${m.node}${m.postgres ? `; PostgreSQL ${m.postgres} (local server)` : ''}; ` +
      `1-minute load average ${m.loadBefore} before the run, ${m.loadAfter} after. Gateway from bench/gateway-server.js (workers off, logs silent) on a fresh store per ` +
      `kind (PostgreSQL: a database created for the run and dropped after it, the store's pool of 10 connections), filled by one INSERT ... SELECT per size with rows like ` +
      'the gateway writes: ids growing with creation time, 8 keys in turn, 84% completed (with a result), 8% failed, 4% cancelled, 2.5% queued, 1.5% processing; then ' +
      `(PostgreSQL) \`VACUUM ANALYZE\`, (SQLite, which the gateway never analyzes) nothing; then a checkpoint. Poll: autocannon, ${CONNECTIONS} connections, ${DURATION} s after a ${WARMUP} s warm-up, \`GET /v1/result/{id}\` for ${fmtInt(POLL_IDS)} task ids ` +
      `of the measured key drawn at random from the whole table, in turn. Claim (of the next queued task, as a worker does) and in-flight count (of the measured key, LIMIT ${IN_FLIGHT_UP_TO}, ` +
      `the measured key's tasks in flight in the smaller table, so both sizes count the same rows; every submit under the default bound counts up to 500): ${CLAIM_RUNS} and ${QUERY_RUNS} sequential calls through the compiled store on a connection of the bench process, no HTTP load running.`,
  );
  lines.push('');
  lines.push(
    '| Store | Tasks | Fill + ANALYZE s | Poll requests/s | Poll p50 ms | Poll p99 ms | CPU cores: gateway / load gen / PostgreSQL / other | Gateway CPU µs/poll | Claim median ms (p99) | In-flight count median ms (p99) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const c = r.poll.cpu;
    const cores = c ? `${c.server.toFixed(2)} / ${c.loadgen.toFixed(2)} / ${c.database.toFixed(2)} / ${c.other.toFixed(2)}` : 'n/a';
    lines.push(
      `| ${r.kind} | ${fmtInt(r.size)} | ${r.fillSecs.toFixed(1)} | ${fmtInt(r.poll.rps)} | ${fmtMs(r.poll.p50)} | ${fmtMs(r.poll.p99)} | ${cores} | ` +
        `${r.poll.cpuUsPerReq === undefined ? 'n/a' : r.poll.cpuUsPerReq.toFixed(0)} | ${r.claim.median.toFixed(3)} (${r.claim.p99.toFixed(3)}) | ${r.count.median.toFixed(3)} (${r.count.p99.toFixed(3)}) |`,
    );
  }
  const planned = rows.filter((r) => r.plans);
  if (planned.length > 0) {
    lines.push('');
    lines.push(
      "PostgreSQL's plans for the store's statements (`EXPLAIN (ANALYZE, BUFFERS)` after the timed runs; indexes read; execution time inside the server):",
    );
    lines.push('');
    lines.push(`| Tasks | Poll (task by id and key hash) | Claim of the next queued task | In-flight count (LIMIT ${IN_FLIGHT_UP_TO}) |`);
    lines.push('|---:|---|---|---|');
    // (every row of `planned` has its plans)
    for (const r of planned)
      lines.push(
        `| ${fmtInt(r.size)} | ${/** @type {Record<string, string>} */ (r.plans).poll} | ${/** @type {Record<string, string>} */ (r.plans).claim} | ${/** @type {Record<string, string>} */ (r.plans).count} |`,
      );
  }
  lines.push('');
  // SIZES has one size at least (an empty setting reads as [0], refused above)
  lines.push(
    `| Store | Target (${fmtInt(/** @type {number} */ (SIZES[SIZES.length - 1]))} tasks vs ${fmtInt(/** @type {number} */ (SIZES[0]))}, within ${FLAT}x) | Measured | Result |`,
  );
  lines.push('|---|---|---:|---|');
  for (const kind of STORES) {
    const small = rows.find((r) => r.kind === kind && r.size === SIZES[0]);
    const big = rows.find((r) => r.kind === kind && r.size === SIZES[SIZES.length - 1]);
    if (!small || !big) continue;
    const slower = [
      ['poll requests/s', small.poll.rps / big.poll.rps],
      ['poll p99', big.poll.p99 / small.poll.p99],
      ['claim median', big.claim.median / small.claim.median],
      ['in-flight count median', big.count.median / small.count.median],
    ];
    for (const [what, ratio] of slower) lines.push(`| ${kind} | ${what} | ${Number(ratio).toFixed(2)}x | ${verdict(Number(ratio) <= FLAT)} |`);
    // CPU per poll barely moves when other processes take cores away, unlike requests/s
    if (small.poll.cpuUsPerReq && big.poll.cpuUsPerReq) {
      lines.push(`| ${kind} | (cross-check, not a target) gateway CPU per poll | ${(big.poll.cpuUsPerReq / small.poll.cpuUsPerReq).toFixed(2)}x | - |`);
    }
  }
  const noisy = rows.filter((r) => r.poll.cpu && r.poll.cpu.other >= NOISE_CORES);
  if (noisy.length > 0) {
    lines.push('');
    lines.push(
      `**Noise warning:** other processes used ${NOISE_CORES} core or more during: ${noisy.map((r) => `${r.poll.name} (${/** @type {NonNullable<typeof r.poll.cpu>} */ (r.poll.cpu).other.toFixed(2)})`).join(', ')}; ` +
        'those requests/s and latencies (and the ratios built on them) say more about the machine than about the table size.',
    );
  }
  const errors = rows.filter((r) => r.poll.errors || r.poll.timeouts || r.poll.non2xx);
  lines.push('');
  lines.push(
    errors.length === 0
      ? 'No errors, timeouts or non-2xx replies in any poll run.'
      : `Errors / timeouts / non-2xx in: ${errors.map((r) => r.poll.name).join(', ')}.`,
  );
  lines.push('');
  return lines.join('\n');
}

async function main() {
  /** @type {import('./harness.js').Machine} */
  const m = machine();
  if (STORES.includes('postgres'))
    m.postgres = await withClient(ADMIN_URL, async (c) => (await c.query('SHOW server_version')).rows[0].server_version.split(' ')[0]);
  process.stderr.write(`table-size: stores ${STORES.join(', ')}, sizes ${SIZES.join(', ')}; load average ${m.loadBefore}\n`);
  const rows = [];
  for (const kind of STORES) rows.push(...(await measureStore(kind)));
  m.loadAfter = loadAverage();
  const section = report(rows, m);
  process.stdout.write(`\n${section}\n`);
  if (!NO_WRITE) writeDocSection('table-size', section);
}

try {
  await main();
} catch (err) {
  console.error('table-size failed:', err);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
