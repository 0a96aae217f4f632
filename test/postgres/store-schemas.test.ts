/**
 * The two stores keep the same records (G394): after their migrations, the SQLite and the
 * PostgreSQL schema have the same tables, the same columns, the same primary and unique keys, and
 * the same named indexes over the same columns, partial where the other is. Each difference is
 * listed below with its reason; any other fails here, so a migration added to one store only is
 * caught before a deployment that moves from one store to the other (`mediagate migrate-store`).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { postgresDatabase, postgresUnavailable, withClient } from '../helpers/postgres.js';

interface Schema {
  /** table -> its columns, sorted */
  columns: Map<string, string[]>;
  /** table -> its primary key's columns */
  primary: Map<string, string[]>;
  /** `table(columns)` of every unique key other than the primary key, sorted */
  unique: string[];
  /** named (non-key) index -> `table(columns)`, `partial` when it has a WHERE */
  indexes: Map<string, string>;
}

/** What only the PostgreSQL store has, and why. */
const POSTGRES_ONLY = {
  /**
   * What the processes of a cluster share: rate-limit counts (`rate_limits`, G196) and long-poll
   * slots (`wait_slots`, G197); one SQLite process counts both in memory.
   */
  tables: ['rate_limits', 'wait_slots'],
  columns: {
    /** The generation's upstream id in a column of its own, for the callbacks' guard (SQLite reads it from the `upstream` JSON). */
    tasks: ['upstream_ref_id'],
  } as Record<string, string[]>,
};

/** Indexes whose columns differ between the stores, with the reason they may. */
const DIFFERENT_INDEXES: Record<string, { sqlite: string; postgres: string }> = {
  // found by this test when it was written: SQLite orders equal run_after by created_at in the
  // index; PostgreSQL sorts those few rows itself. Same rows, same meaning.
  tasks_queue: { sqlite: 'tasks(provider,run_after,created_at) partial', postgres: 'tasks(provider,run_after) partial' },
};

function sqliteSchema(file: string): Schema {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    const schema: Schema = { columns: new Map(), primary: new Map(), unique: [], indexes: new Map() };
    for (const table of tables) {
      const info = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; pk: number }>;
      schema.columns.set(table, info.map((c) => c.name).sort());
      schema.primary.set(
        table,
        info
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
      );
      for (const index of db.prepare(`PRAGMA index_list(${table})`).all() as Array<{ name: string; unique: number; origin: string; partial: number }>) {
        if (index.origin === 'pk') continue;
        const cols = (db.prepare(`PRAGMA index_info(${index.name})`).all() as Array<{ name: string }>).map((c) => c.name);
        const shape = `${table}(${cols.join(',')})${index.partial ? ' partial' : ''}`;
        if (index.origin === 'u') schema.unique.push(shape);
        else schema.indexes.set(index.name, `${index.unique ? 'unique ' : ''}${shape}`);
      }
    }
    schema.unique.sort();
    return schema;
  } finally {
    db.close();
  }
}

async function postgresSchema(url: string): Promise<Schema> {
  return withClient(url, async (client) => {
    const schema: Schema = { columns: new Map(), primary: new Map(), unique: [], indexes: new Map() };
    const cols = await client.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
    );
    for (const c of cols.rows) schema.columns.set(c.table_name, [...(schema.columns.get(c.table_name) ?? []), c.column_name].sort());
    const indexes = await client.query<{
      table: string;
      name: string;
      unique: boolean;
      primary: boolean;
      partial: boolean;
      constraint: boolean;
      cols: string[];
    }>(`
      SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique, x.indisprimary AS primary,
             x.indpred IS NOT NULL AS partial, EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid) AS constraint,
             ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS cols
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace s ON s.oid = t.relnamespace WHERE s.nspname = 'public'`);
    for (const x of indexes.rows) {
      const shape = `${x.table}(${x.cols.join(',')})${x.partial ? ' partial' : ''}`;
      if (x.primary) schema.primary.set(x.table, x.cols);
      else if (x.constraint) schema.unique.push(shape);
      else schema.indexes.set(x.name, `${x.unique ? 'unique ' : ''}${shape}`);
    }
    for (const table of schema.columns.keys()) if (!schema.primary.has(table)) schema.primary.set(table, []);
    schema.unique.sort();
    return schema;
  });
}

const unavailable = await postgresUnavailable();

describe.skipIf(unavailable !== undefined)(`the SQLite and PostgreSQL schemas${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();

  it('have the same tables, columns, keys and indexes, but for the differences listed with their reasons', async () => {
    const dir = tempDir('mediagate-schemas-');
    const file = path.join(dir, 'mediagate.db');
    try {
      await openSqliteStore(file).close();
      const lite = sqliteSchema(file);
      const url = await database.empty();
      await (await openPostgresStore({ url })).close();
      const pg = await postgresSchema(url);

      // tables and columns
      for (const table of POSTGRES_ONLY.tables) {
        pg.columns.delete(table);
        pg.primary.delete(table);
      }
      for (const [table, extra] of Object.entries(POSTGRES_ONLY.columns))
        pg.columns.set(
          table,
          pg.columns.get(table)!.filter((c) => !extra.includes(c)),
        );
      expect([...pg.columns.keys()].sort()).toEqual([...lite.columns.keys()].sort());
      for (const [table, columns] of lite.columns) expect(pg.columns.get(table), table).toEqual(columns);
      // keys
      for (const [table, key] of lite.primary) expect(pg.primary.get(table), `${table} primary key`).toEqual(key);
      expect(pg.unique.filter((u) => !POSTGRES_ONLY.tables.some((t) => u.startsWith(`${t}(`)))).toEqual(lite.unique);
      // named indexes
      const named = (s: Schema, side: 'sqlite' | 'postgres') =>
        Object.fromEntries(
          [...s.indexes]
            .filter(([, shape]) => !POSTGRES_ONLY.tables.some((t) => shape.replace(/^unique /, '').startsWith(`${t}(`)))
            .map(([name, shape]) => [name, DIFFERENT_INDEXES[name]?.[side] === shape ? 'as listed' : shape]),
        );
      expect(named(pg, 'postgres')).toEqual(named(lite, 'sqlite'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
