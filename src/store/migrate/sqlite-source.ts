/**
 * The SQLite side of `mediagate migrate-store` (G188): the database file opened at the current
 * schema, its write lock held and one read transaction open for the whole copy, so every table is
 * read from one consistent snapshot and a gateway still running cannot commit a write the copy
 * would miss (its writes wait, then fail with "database is locked", until the copy ends).
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { migrate, SCHEMA_VERSION } from '../sqlite/migrations.js';
import { COPIED_TABLES, NOT_COPIED, sqliteSelect, type CopiedTable } from './tables.js';

/** A reason the migration cannot go on, said to the operator as it is (exit code 1). */
export class MigrationError extends Error {}

/** How long taking the write lock waits for a writer that holds it (a gateway still running). */
const LOCK_WAIT_MS = 5000;

export interface SqliteSource {
  readonly file: string;
  /** Rows of the table in the snapshot. */
  count(table: CopiedTable): number;
  /** The table's rows, one array of column values each (in the table's column order), read lazily. */
  rows(table: CopiedTable): IterableIterator<unknown[]>;
  /** Ends the read transaction (it wrote nothing) and closes the file. */
  close(): void;
}

export function openSqliteSource(file: string): SqliteSource {
  if (!fs.existsSync(file))
    throw new MigrationError(`no SQLite database at ${file} (set MEDIAGATE_DATA_DIR to the gateway's data directory, or give --from FILE)`);
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw new MigrationError(`cannot open ${file}: ${(err as Error).message}`);
  }
  try {
    db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    checkSchema(db, file);
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      throw new MigrationError(`${file} is being written by another process (${(err as Error).message}): stop the gateways that use it first`);
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    file,
    count: (table) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table.name}`).get() as { n: number }).n,
    rows: (table) => db.prepare(sqliteSelect(table)).raw(true).iterate() as IterableIterator<unknown[]>,
    close: () => {
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
    },
  };
}

/**
 * A mediagate database, brought to the current schema as a gateway start would (an older one is
 * migrated first), with no table this migration does not know.
 */
function checkSchema(db: Database.Database, file: string): void {
  const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name);
  if (!tables.includes('schema_migrations')) throw new MigrationError(`${file} is not a mediagate database (it has no schema_migrations table)`);
  const { v } = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  if ((v ?? 0) > SCHEMA_VERSION)
    throw new MigrationError(
      `${file} has schema version ${v}, newer than this mediagate knows (${SCHEMA_VERSION}): run the migration with the mediagate version that wrote it`,
    );
  if ((v ?? 0) < SCHEMA_VERSION) migrate(db);
  const known = new Set([...COPIED_TABLES.map((t) => t.name), ...NOT_COPIED]);
  const unknown = tables.filter((t) => !known.has(t));
  if (unknown.length > 0) throw new MigrationError(`${file} has tables this migration does not copy (${unknown.join(', ')}); nothing was copied`);
}
