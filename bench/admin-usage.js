// GET /admin/v1/usage on a store that has seen 1,000,000 tasks (issue 26): is the answer under
// 100 ms? Run by hand after `npm run build`: `node bench/admin-usage.js` (never part of the tests).
//
// Per store (SQLite: a fresh file in a temp folder, removed at the end; PostgreSQL: a database
// created on BENCH_POSTGRES_URL's server and dropped at the end), through the compiled store (dist/):
//   1. seeds the hourly and daily aggregates (usage_hourly, usage_daily, G321) that BENCH_USAGE_TASKS tasks leave behind:
//      tasks over the last 30 days, at random hours, from 100 keys of 10 accounts, each key using 2
//      of 10 models, each model at one of 4 providers; every task submitted, 90% completed (a
//      third of them videos of 5 s, the rest one image), 7% failed, 3% cancelled, the completed
//      ones captured at 0.05 credits; the rows are what the store's triggers write as tasks are
//      submitted and end (one row per hour, model, key, account and provider), inserted in bulk;
//   2. times BENCH_USAGE_RUNS answers of each query below (dist/admin/usage-admin.js: the store's
//      read and the reply), after 5 unmeasured ones.
// Target: every query's p99 under 100 ms. Writes the `bench:admin-usage` section of docs/BENCHMARKS.md.
//
// Settings: BENCH_USAGE_STORES (default sqlite,postgres), BENCH_USAGE_TASKS (default 1000000),
// BENCH_USAGE_RUNS (default 50), BENCH_POSTGRES_URL, BENCH_NO_WRITE=1 (leave the docs alone).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { writeDocSection } from './doc-section.js';

const dist = new URL('../dist/', import.meta.url);
const { openSqliteStore } = await import(new URL('store/sqlite/open.js', dist).href);
const { openPostgresStore } = await import(new URL('store/postgres/index.js', dist).href);
const { readUsage } = await import(new URL('admin/usage-admin.js', dist).href);

const STORES = (process.env.BENCH_USAGE_STORES ?? 'sqlite,postgres').split(',').filter(Boolean);
const TASKS = Number(process.env.BENCH_USAGE_TASKS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_USAGE_RUNS ?? 50);
const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const HOUR = 3_600_000;
const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const LOAD_BEFORE = os.loadavg()[0] ?? 0;

const QUERIES = [
  ['last 24 h by hour and model (the default)', {}],
  ['last 24 h by hour and key', { group_by: 'key' }],
  ['last 7 days by hour and provider', { group_by: 'provider', from: String((NOW - 7 * 24 * HOUR) / 1000) }],
  ['last 30 days by day and account', { group_by: 'account', interval: 'day' }],
  ['last 30 days by day and key', { group_by: 'key', interval: 'day' }],
];

/**
 * One aggregate row, in the order of `columns()`: the hour (or day) in ms, model, key, account,
 * provider, then the counts (submitted, completed, failed, cancelled, video seconds, images,
 * captured micro-credits).
 * @typedef {[number, string, string, string, string, number, number, number, number, number, number, number]} Row
 */

/**
 * The aggregate rows TASKS tasks leave (seeded random: the same rows every run).
 * @returns {Row[]}
 */
function aggregates() {
  let seed = 42; // mulberry32
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const models = Array.from({ length: 10 }, (_, i) => `model-${i}`);
  /** @type {Map<string, { submitted: number, completed: number, failed: number, cancelled: number, video: number, images: number, captured: number }>} */
  const rows = new Map();
  for (let i = 0; i < TASKS; i++) {
    const key = Math.floor(random() * 100);
    const m = (key + (random() < 0.5 ? 0 : 3)) % 10;
    const hour = NOW - Math.floor(random() * 720) * HOUR;
    const id = `${hour}|${models[m]}|key_${key}|acct_${key % 10}|provider-${m % 4}`;
    let r = rows.get(id);
    if (!r) {
      r = { submitted: 0, completed: 0, failed: 0, cancelled: 0, video: 0, images: 0, captured: 0 };
      rows.set(id, r);
    }
    r.submitted++;
    const end = random();
    if (end < 0.9) {
      r.completed++;
      r.captured += 50_000;
      if (random() < 1 / 3) r.video += 5;
      else r.images++;
    } else if (end < 0.97) r.failed++;
    else r.cancelled++;
  }
  // the id's five parts: the hour (a number), then model, key, account and provider
  return [...rows].map(
    ([id, r]) =>
      /** @type {Row} */ ([
        ...id.split('|').map((v, i) => (i === 0 ? Number(v) : v)),
        r.submitted,
        r.completed,
        r.failed,
        r.cancelled,
        r.video,
        r.images,
        r.captured,
      ]),
  );
}

/**
 * The daily rows of the hourly ones (usage_daily, kept by the same triggers).
 * @param {Row[]} hourly
 * @returns {Row[]}
 */
function daily(hourly) {
  const days = new Map();
  for (const r of hourly) {
    const day = Math.floor(r[0] / 86_400_000) * 86_400_000;
    const id = [day, ...r.slice(1, 5)].join('|');
    const d = days.get(id);
    if (!d) days.set(id, [day, ...r.slice(1)]);
    else for (let i = 5; i < r.length; i++) d[i] += r[i];
  }
  return [...days.values()];
}

/** @param {'hour' | 'day'} bucket */
const columns = (bucket) => `${bucket}, model, key_id, account_id, provider, submitted, completed, failed, cancelled, video_seconds, images, captured_micro`;

/** @param {string} file @param {Row[]} rows */
async function seedSqlite(file, rows) {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(file);
  for (const [table, bucket, data] of /** @type {const} */ ([
    ['usage_hourly', 'hour', rows],
    ['usage_daily', 'day', daily(rows)],
  ])) {
    const insert = db.prepare(
      `INSERT INTO ${table} (${columns(bucket)}) VALUES (${columns(bucket)
        .split(', ')
        .map(() => '?')
        .join(', ')})`,
    );
    db.transaction(() => {
      for (const r of data) insert.run(...r);
    })();
  }
  db.close();
}

/** @param {string} url @param {Row[]} rows */
async function seedPostgres(url, rows) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const types = ['bigint', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'bigint', 'float8', 'bigint', 'bigint'];
  for (const [table, bucket, data] of /** @type {const} */ ([
    ['usage_hourly', 'hour', rows],
    ['usage_daily', 'day', daily(rows)],
  ])) {
    for (let i = 0; i < data.length; i += 20_000) {
      const batch = data.slice(i, i + 20_000);
      await client.query(
        `INSERT INTO ${table} (${columns(bucket)}) SELECT * FROM unnest(${types.map((t, j) => `$${j + 1}::${t}[]`).join(', ')})`,
        types.map((_, j) => batch.map((r) => r[j])),
      );
    }
    await client.query(`VACUUM ANALYZE ${table}`);
  }
  await client.end();
}

/** @param {number[]} sorted ascending, not empty @param {number} p */
const percentile = (sorted, p) => /** @type {number} */ (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);

/** @param {import('../src/store/types.js').Store} store */
async function measure(store) {
  const out = [];
  for (const [name, query] of QUERIES) {
    for (let i = 0; i < 5; i++) await readUsage(store.admin, query, NOW);
    const times = [];
    let buckets = 0;
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      const reply = await readUsage(store.admin, query, NOW);
      times.push(performance.now() - t);
      buckets = reply.data.length;
    }
    times.sort((a, b) => a - b);
    out.push({ name, buckets, median: percentile(times, 50), p99: percentile(times, 99) });
  }
  return out;
}

const rows = aggregates();
console.log(`${TASKS.toLocaleString('en')} tasks -> ${rows.length.toLocaleString('en')} aggregate rows`);
const results = [];
for (const kind of STORES) {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-usage-'));
    const file = path.join(dir, 'mediagate.db');
    openSqliteStore(file).close();
    const t = performance.now();
    await seedSqlite(file, rows);
    const seeded = (performance.now() - t) / 1000;
    const store = openSqliteStore(file);
    results.push({ kind, seeded, timings: await measure(store) });
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  } else {
    const name = `mediagate_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    try {
      const store = await openPostgresStore({ url: url.href, poolSize: 4 });
      const t = performance.now();
      await seedPostgres(url.href, rows);
      const seeded = (performance.now() - t) / 1000;
      results.push({ kind, seeded, timings: await measure(store) });
      await store.close();
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
}

const pass = results.every((r) => r.timings.every((t) => t.p99 < 100));
const lines = [
  '## Usage of a 1,000,000-task store (bench/admin-usage.js)',
  '',
  `Run ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; \`nproc\` ${os.cpus().length}; Node ${process.version}; 1-minute load average ${LOAD_BEFORE.toFixed(2)} before the run, ${(os.loadavg()[0] ?? 0).toFixed(2)} after it. The hourly and daily aggregates (usage_hourly, usage_daily, G321) of ${TASKS.toLocaleString('en')} tasks over the last 30 days: 100 keys of 10 accounts, each key using 2 of 10 models, each model at one of 4 providers; 90% completed (a third videos of 5 s), 7% failed, 3% cancelled: ${rows.length.toLocaleString('en')} hourly rows (one per hour, model, key, account and provider) and ${daily(rows).length.toLocaleString('en')} daily ones, seeded in bulk. Each query answered ${RUNS} times after 5 unmeasured, through the compiled store and the route's reply (dist/admin/usage-admin.js), no other load. Target: p99 under 100 ms. **${pass ? 'Met' : 'Not met'}.**`,
  '',
  '| Store | Seed s | Query | Buckets x groups answered | Median ms | p99 ms |',
  '|---|---:|---|---:|---:|---:|',
  ...results.flatMap((r) =>
    r.timings.map(
      (t) => `| ${r.kind} | ${r.seeded.toFixed(1)} | ${t.name} | ${t.buckets.toLocaleString('en')} | ${t.median.toFixed(2)} | ${t.p99.toFixed(2)} |`,
    ),
  ),
  '',
  'The answer reads the aggregate rows of its range only, never the tasks: its cost follows the rows in the range (hours x the groups active in them), not the tasks stored.',
];
console.log(lines.join('\n'));
if (process.env.BENCH_NO_WRITE !== '1') writeDocSection('admin-usage', lines.join('\n'));
if (!pass) process.exitCode = 1;
