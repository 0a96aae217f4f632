/**
 * What `mediagate migrate-store` copies from the SQLite store to PostgreSQL (G187): every table
 * of sqlite/migrations.ts, each column with its PostgreSQL type and, where the two schemas differ,
 * how the SQLite row gives the PostgreSQL column. A SQLite table named neither here nor in
 * {@link NOT_COPIED} stops the copy (a table added later must be added here too).
 */

/** A PostgreSQL array element type the rows are sent as (one `unnest` array per column). */
export type ColumnType = 'text' | 'bigint' | 'integer' | 'float8';

export interface CopiedColumn {
  name: string;
  type: ColumnType;
  /** The SQLite expression giving it, when that is not the column of the same name. */
  from?: string;
}

export interface CopiedTable {
  name: string;
  columns: readonly CopiedColumn[];
  /** Appended to the INSERT: how a row the target already has is treated (only the fair clock's single row). */
  onConflict?: string;
  /** The table's own id sequence is set past the copied ids afterwards (PostgreSQL identity columns). */
  identity?: string;
  /** Rows the empty target already holds (the fair clock's single row): not counted as data there. */
  seeded?: number;
}

const col = (name: string, type: ColumnType, from?: string): CopiedColumn => ({ name, type, ...(from !== undefined && { from }) });

/** The usage aggregates' group and count columns after their bucket, the same in `usage_hourly` and `usage_daily` (G321). */
const USAGE_GROUP_AND_COUNTS: readonly CopiedColumn[] = [
  col('model', 'text'),
  col('key_id', 'text'),
  col('account_id', 'text'),
  col('provider', 'text'),
  col('submitted', 'bigint'),
  col('completed', 'bigint'),
  col('failed', 'bigint'),
  col('cancelled', 'bigint'),
  col('video_seconds', 'float8'),
  col('images', 'bigint'),
  col('chat_requests', 'bigint'),
  col('prompt_tokens', 'bigint'),
  col('completion_tokens', 'bigint'),
  col('captured_micro', 'bigint'),
];

/** In dependency-free order; keys first, so a reader of the progress sees them first. */
export const COPIED_TABLES: readonly CopiedTable[] = [
  {
    name: 'api_keys',
    columns: [
      col('id', 'text'),
      col('name', 'text'),
      col('prefix', 'text'),
      col('hash', 'text'),
      col('created_at', 'bigint'),
      col('revoked_at', 'bigint'),
      col('submit_rate', 'integer'),
      col('query_rate', 'integer'),
      col('account_id', 'text'),
      col('spend_cap_micro', 'bigint'),
      col('held_micro', 'bigint'),
      col('spent_micro', 'bigint'),
      col('webhook_url', 'text'),
      col('webhook_secret', 'text'),
      col('webhook_secret_previous', 'text'),
      col('webhook_secret_rotated_at', 'bigint'),
      col('role', 'text'),
      col('models', 'text'),
      col('expires_at', 'bigint'),
      col('max_in_flight', 'integer'),
    ],
  },
  { name: 'api_key_grace', columns: [col('hash', 'text'), col('key_id', 'text'), col('valid_until', 'bigint')] },
  { name: 'api_key_usage', columns: [col('key_id', 'text'), col('last_used', 'bigint')] },
  {
    name: 'audit_log',
    columns: [
      col('id', 'bigint'),
      col('at', 'bigint'),
      col('actor', 'text'),
      col('action', 'text'),
      col('target', 'text'),
      col('request_id', 'text'),
      col('details', 'text'),
    ],
    identity: 'id',
  },
  {
    name: 'accounts',
    columns: [
      col('id', 'text'),
      col('name', 'text'),
      col('created_at', 'bigint'),
      col('available_micro', 'bigint'),
      col('held_micro', 'bigint'),
      col('spent_micro', 'bigint'),
    ],
  },
  {
    name: 'ledger',
    columns: [
      col('id', 'bigint'),
      col('account_id', 'text'),
      col('kind', 'text'),
      col('amount_micro', 'bigint'),
      col('settled_micro', 'bigint'),
      col('key_id', 'text'),
      col('task_id', 'text'),
      col('request_id', 'text'),
      col('model', 'text'),
      col('note', 'text'),
      col('created_at', 'bigint'),
    ],
    identity: 'id',
  },
  {
    name: 'tasks',
    columns: [
      col('id', 'text'),
      col('owner_key_id', 'text'),
      col('family', 'text'),
      col('form', 'text'),
      col('model', 'text'),
      col('provider', 'text'),
      col('request', 'text'),
      col('status', 'text'),
      col('progress', 'integer'),
      col('result', 'text'),
      col('error', 'text'),
      col('amount', 'float8'),
      col('created_at', 'bigint'),
      col('updated_at', 'bigint'),
      col('started_at', 'bigint'),
      col('finished_at', 'bigint'),
      col('attempts', 'integer'),
      col('server_faults', 'integer'),
      col('lease_owner', 'text'),
      col('lease_expires_at', 'bigint'),
      col('run_after', 'bigint'),
      col('expires_at', 'bigint'),
      col('idempotency_key', 'text'),
      col('vtime', 'bigint'),
      col('upstream', 'text'),
      col('account_id', 'text'),
      col('hold_micro', 'bigint'),
      col('per_second_micro', 'bigint'),
      // the PostgreSQL store keeps the reference id its guards compare in a column (SQLite reads it from the JSON)
      col('upstream_ref_id', 'text', `CAST(json_extract(upstream, '$.ref.id') AS TEXT)`),
      col('callback_url', 'text'),
      col('attempt_error', 'text'),
    ],
  },
  {
    name: 'task_events',
    columns: [
      col('id', 'bigint'),
      col('task_id', 'text'),
      col('at', 'bigint'),
      col('from_status', 'text'),
      col('status', 'text'),
      col('attempt', 'integer'),
      col('provider', 'text'),
      col('upstream_id', 'text'),
      col('error', 'text'),
    ],
    identity: 'id',
  },
  {
    // after tasks: each delivery references its task
    name: 'webhook_deliveries',
    columns: [
      col('id', 'text'),
      col('task_id', 'text'),
      col('owner_key_id', 'text'),
      col('url', 'text'),
      col('status', 'text'),
      col('body', 'text'),
      col('attempts', 'text'),
      col('attempt_count', 'integer'),
      col('next_attempt_at', 'bigint'),
      col('lease_owner', 'text'),
      col('created_at', 'bigint'),
    ],
  },
  { name: 'fair_keys', columns: [col('key_id', 'text'), col('last_vtime', 'bigint')] },
  {
    name: 'fair_clock',
    columns: [col('id', 'integer'), col('vtime', 'bigint')],
    onConflict: 'ON CONFLICT (id) DO UPDATE SET vtime = excluded.vtime',
    seeded: 1,
  },
  {
    name: 'assets',
    columns: [
      col('id', 'text'),
      col('owner_key_id', 'text'),
      col('status', 'text'),
      col('reason', 'text'),
      col('kind', 'text'),
      col('format', 'text'),
      col('width', 'integer'),
      col('height', 'integer'),
      col('duration', 'float8'),
      col('fps', 'float8'),
      col('bytes', 'bigint'),
      col('file', 'text'),
      col('created_at', 'bigint'),
      col('expires_at', 'bigint'),
    ],
  },
  {
    name: 'idempotency_keys',
    columns: [
      col('key_id', 'text'),
      col('idem_key', 'text'),
      col('fingerprint', 'text'),
      col('status_code', 'integer'),
      col('response', 'text'),
      col('created_at', 'bigint'),
    ],
  },
  {
    name: 'chat_usage',
    columns: [
      col('id', 'bigint'),
      col('key_id', 'text'),
      col('model', 'text'),
      col('request_id', 'text'),
      col('prompt_tokens', 'integer'),
      col('completion_tokens', 'integer'),
      col('created_at', 'bigint'),
    ],
    identity: 'id',
  },
  // after chat_usage and the ledger, whose rows they sum (G321): a row PostgreSQL refuses is reported in its own table first
  {
    name: 'usage_hourly',
    columns: [col('hour', 'bigint'), ...USAGE_GROUP_AND_COUNTS],
  },
  {
    name: 'usage_daily',
    columns: [col('day', 'bigint'), ...USAGE_GROUP_AND_COUNTS],
  },
  {
    name: 'channel_states',
    columns: [
      col('channel', 'text'),
      col('state', 'text'),
      col('since', 'bigint'),
      col('last_error', 'text'),
      col('last_error_at', 'bigint'),
      col('updated_at', 'bigint'),
    ],
  },
  {
    name: 'channel_minutes',
    columns: [
      col('channel', 'text'),
      col('minute', 'bigint'),
      col('ok', 'bigint'),
      col('faults', 'bigint'),
      col('errors', 'bigint'),
      col('refused', 'bigint'),
      col('calls_timed', 'bigint'),
      col('seconds', 'float8'),
    ],
  },
];

/** SQLite tables that are not data: each engine records its own schema steps; SQLite's AUTOINCREMENT bookkeeping; the heartbeats of the processes running now (G264); console sessions (sign in again after a move, G361). */
export const NOT_COPIED: readonly string[] = ['schema_migrations', 'sqlite_sequence', 'worker_beats', 'console_sessions'];

/** The SELECT reading a table's rows from SQLite, columns in the table's order. */
export const sqliteSelect = (t: CopiedTable): string => `SELECT ${t.columns.map((c) => c.from ?? c.name).join(', ')} FROM ${t.name}`;

/** The INSERT of a batch into PostgreSQL: one array parameter per column, unnested into rows. */
export function postgresInsert(t: CopiedTable): string {
  const names = t.columns.map((c) => c.name).join(', ');
  const arrays = t.columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
  const overriding = t.identity ? ' OVERRIDING SYSTEM VALUE' : '';
  return `INSERT INTO ${t.name} (${names})${overriding} SELECT * FROM unnest(${arrays}) ${t.onConflict ?? ''}`.trimEnd();
}
