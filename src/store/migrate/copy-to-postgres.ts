/**
 * `mediagate migrate-store` (G187): the SQLite store's rows copied into a PostgreSQL database, in
 * one PostgreSQL transaction (a failure leaves the target as it was: empty), from one SQLite read
 * snapshot (sqlite-source.ts). Rows stream in batches (at most {@link BATCH_ROWS} rows or about
 * {@link BATCH_CHARS} characters of text per INSERT, one array per column), so millions of tasks
 * never sit in memory. The target's schema is made by the PostgreSQL store's own open path
 * (advisory-locked migrations); a target that already holds data is refused.
 */
import pg from 'pg';
import { redactedUrl } from '../../redacted-url.js';
import { clientConfig } from '../postgres/connect.js';
import { openPostgresStore } from '../postgres/index.js';
import { QUEUE_CHANNEL } from '../postgres/migrations.js';
import { MigrationError, openSqliteSource, type SqliteSource } from './sqlite-source.js';
import { COPIED_TABLES, postgresInsert, type CopiedTable } from './tables.js';

export const BATCH_ROWS = 1000;
export const BATCH_CHARS = 8 * 1_048_576;
/** A progress line at least every this many rows of one table. */
const PROGRESS_ROWS = 100_000;

export interface TableCopied {
  table: string;
  /** Rows in the SQLite snapshot, rows written, and rows the target holds afterwards (all equal, or the copy fails). */
  rows: number;
}

export interface MigrateStoreOptions {
  sqliteFile: string;
  postgresUrl: string;
  /** Progress: rows of `table` copied so far (`done` once the table is complete). */
  onProgress?: (p: { table: string; rows: number; done: boolean }) => void;
  /**
   * Runs once the source is locked and the target checked to be empty, before the copy's
   * transaction begins (the `--files` upload: its files cannot change meanwhile).
   */
  beforeCopy?: () => Promise<void>;
}

/** Copies every table; resolves with the verified row count of each, rejects (target unchanged) on any problem. */
export async function migrateSqliteToPostgres(options: MigrateStoreOptions): Promise<TableCopied[]> {
  const source = openSqliteSource(options.sqliteFile);
  try {
    await prepareTarget(options.postgresUrl);
    const client = new pg.Client(clientConfig(options.postgresUrl, 'migrate-store'));
    // a connection lost mid-copy fails the query under way (and the copy, cleanly); unheard, its error event would end the process (G257)
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      throw new MigrationError(`cannot connect to ${redactedUrl(options.postgresUrl, 'the --to URL')}: ${(err as Error).message}`);
    }
    try {
      await refuseUnlessEmpty(client, options.postgresUrl);
      await options.beforeCopy?.();
      await client.query('BEGIN');
      try {
        const copied = await copyAll(source, client, options.postgresUrl, options.onProgress);
        await client.query('COMMIT');
        return copied;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  } finally {
    source.close();
  }
}

/** Creates or updates the target's schema the way every gateway start does (once across processes). */
async function prepareTarget(url: string): Promise<void> {
  let store: Awaited<ReturnType<typeof openPostgresStore>>;
  try {
    store = await openPostgresStore({ url, poolSize: 1 });
  } catch (err) {
    throw new MigrationError((err as Error).message); // it names the URL without its password
  }
  await store.close();
}

/** Refuses a target holding any data (G187): the copy never merges into, or replaces, a live database. */
async function refuseUnlessEmpty(client: pg.Client, url: string): Promise<void> {
  const holding: string[] = [];
  for (const t of COPIED_TABLES) {
    const seeded = t.seeded ?? 0;
    const { rows } = await client.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM (SELECT 1 FROM ${t.name} LIMIT ${seeded + 1}) x`);
    if (rows[0]!.n > seeded) holding.push(t.name);
  }
  if (holding.length > 0) {
    throw new MigrationError(
      `${redactedUrl(url, 'the --to URL')} already holds data (${holding.join(', ')}); migrate-store only copies into an empty database, nothing was copied`,
    );
  }
}

/** The triggers that write the task timeline and the usage aggregates (G318, G321): off while copying. */
const AGGREGATE_TRIGGERS: ReadonlyArray<readonly [string, string]> = [
  ['tasks', 'tasks_usage_submitted'],
  ['tasks', 'tasks_status_events'],
  ['tasks', 'tasks_events_deleted'],
  ['chat_usage', 'chat_usage_hourly'],
  ['ledger', 'ledger_usage_captured'],
];

async function copyAll(source: SqliteSource, client: pg.Client, url: string, onProgress: MigrateStoreOptions['onProgress']): Promise<TableCopied[]> {
  // no gateway may write meanwhile, and a second migration waits here, then finds the data and refuses
  await client.query(`LOCK TABLE ${COPIED_TABLES.map((t) => t.name).join(', ')} IN EXCLUSIVE MODE`);
  await refuseUnlessEmpty(client, url);
  // one notification per copied task would fill the notification queue: the trigger is off for this transaction's rows
  await client.query('ALTER TABLE tasks DISABLE TRIGGER tasks_notify');
  // the timeline and the usage aggregates are copied as they are: the triggers that keep them would count the copied rows again (G318)
  for (const [table, trigger] of AGGREGATE_TRIGGERS) await client.query(`ALTER TABLE ${table} DISABLE TRIGGER ${trigger}`);
  const copied: TableCopied[] = [];
  for (const table of COPIED_TABLES) {
    const written = await copyTable(source, client, table, onProgress);
    if (table.identity) {
      await client.query(
        `SELECT setval(pg_get_serial_sequence('${table.name}', '${table.identity}'), COALESCE(MAX(${table.identity}), 0) + 1, false) FROM ${table.name}`,
      );
    }
    const expected = source.count(table);
    const { rows } = await client.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table.name}`);
    if (written !== expected || rows[0]!.n !== expected) {
      throw new MigrationError(
        `${table.name}: the SQLite snapshot holds ${expected} rows, ${written} were copied and PostgreSQL holds ${rows[0]!.n}; nothing was copied`,
      );
    }
    copied.push({ table: table.name, rows: expected });
  }
  await client.query('ALTER TABLE tasks ENABLE TRIGGER tasks_notify');
  for (const [table, trigger] of AGGREGATE_TRIGGERS) await client.query(`ALTER TABLE ${table} ENABLE TRIGGER ${trigger}`);
  // workers already listening learn at commit that there is work (G184)
  await client.query(
    `SELECT pg_notify($1, provider) FROM (SELECT DISTINCT provider FROM tasks
    WHERE status = 'queued' OR (status = 'processing' AND lease_owner IS NULL)) p`,
    [QUEUE_CHANNEL],
  );
  return copied;
}

/** Streams one table's rows into batched INSERTs; answers the rows written. */
async function copyTable(source: SqliteSource, client: pg.Client, table: CopiedTable, onProgress: MigrateStoreOptions['onProgress']): Promise<number> {
  const insert = { name: `mg_migrate_${table.name}`, text: postgresInsert(table) };
  let columns: unknown[][] = table.columns.map(() => []);
  let batchRows = 0;
  let batchChars = 0;
  let written = 0;
  let reported = 0;
  const flush = async (): Promise<void> => {
    if (batchRows === 0) return;
    try {
      await client.query({ ...insert, values: columns });
    } catch (err) {
      throw new MigrationError(`${table.name}: PostgreSQL refused rows ${written + 1}-${written + batchRows} (${(err as Error).message}); nothing was copied`);
    }
    written += batchRows;
    columns = table.columns.map(() => []);
    batchRows = 0;
    batchChars = 0;
    if (written - reported >= PROGRESS_ROWS) {
      reported = written;
      onProgress?.({ table: table.name, rows: written, done: false });
    }
  };
  for (const row of source.rows(table)) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      columns[i]!.push(value);
      if (typeof value === 'string') batchChars += value.length;
    }
    if (++batchRows >= BATCH_ROWS || batchChars >= BATCH_CHARS) await flush();
  }
  await flush();
  onProgress?.({ table: table.name, rows: written, done: true });
  return written;
}
