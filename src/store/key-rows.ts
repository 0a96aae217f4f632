/**
 * The `api_keys` table's row shape (without the hash) and its mapping to records, and the
 * statements of the admin reads and writes (G300-G308), shared by the SQLite and PostgreSQL stores:
 * plain SQL both engines read alike, placeholders written by the caller (`?` or `$n`).
 */
import type { ApiKeyRecord, KeyListQuery, KeyPatch, KeyRole } from './types.js';

/** Which engine a shared statement is written for: its placeholders (`?` or `$n`) and its few words that differ. */
export type Dialect = 'sqlite' | 'postgres';

/** A placeholder writer for `dialect`. */
export const placeholderOf =
  (dialect: Dialect) =>
  (n: number): string =>
    dialect === 'sqlite' ? '?' : `$${n}`;

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
  submit_rate: number | null;
  query_rate: number | null;
  account_id: string;
  spend_cap_micro: number | null;
  webhook_url: string | null;
  role: KeyRole;
  models: string | null;
  expires_at: number | null;
  max_in_flight: number | null;
  /** Only in the admin reads (`get`, `listPage`). */
  last_used?: number | null;
  /** Only for a key found by a secret a rotation replaced. */
  grace_until?: number | null;
}

const COLUMNS = [
  'id',
  'name',
  'prefix',
  'created_at',
  'revoked_at',
  'submit_rate',
  'query_rate',
  'account_id',
  'spend_cap_micro',
  'webhook_url',
  'role',
  'models',
  'expires_at',
  'max_in_flight',
];

/** The columns a {@link KeyRow} is read from. */
export const KEY_COLUMNS = COLUMNS.join(', ');

/** The same columns of the table under `alias` (for joins). */
export const keyColumnsOf = (alias: string): string => COLUMNS.map((c) => `${alias}.${c}`).join(', ');

const num = (v: number | string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

export const keyOfRow = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  accountId: r.account_id,
  prefix: r.prefix,
  createdAt: Number(r.created_at),
  revokedAt: num(r.revoked_at),
  submitRate: r.submit_rate,
  queryRate: r.query_rate,
  spendCapMicro: num(r.spend_cap_micro),
  webhookUrl: r.webhook_url ?? null,
  role: r.role ?? 'caller',
  models: r.models === null || r.models === undefined ? null : (JSON.parse(r.models) as string[]),
  expiresAt: num(r.expires_at),
  maxInFlight: r.max_in_flight ?? null,
  ...(r.last_used !== undefined && { lastUsed: num(r.last_used) }),
  ...(r.grace_until !== undefined && r.grace_until !== null && { graceUntil: Number(r.grace_until) }),
});

/** The columns `KeyStore.update` writes, per patch field, and how a value is stored. */
const PATCH_COLUMNS: Record<keyof KeyPatch, { column: string; value: (v: unknown) => unknown }> = {
  name: { column: 'name', value: (v) => v },
  models: { column: 'models', value: (v) => (v === null ? null : JSON.stringify(v)) },
  expiresAt: { column: 'expires_at', value: (v) => v },
  submitRate: { column: 'submit_rate', value: (v) => v },
  queryRate: { column: 'query_rate', value: (v) => v },
  spendCapMicro: { column: 'spend_cap_micro', value: (v) => v },
  maxInFlight: { column: 'max_in_flight', value: (v) => v },
  webhookUrl: { column: 'webhook_url', value: (v) => v },
};

/** `UPDATE api_keys SET ... WHERE id = ...` for the fields `patch` holds; undefined when it holds none. */
export function keyUpdateSql(id: string, patch: KeyPatch, dialect: Dialect): { text: string; values: unknown[] } | undefined {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const sets = (Object.keys(PATCH_COLUMNS) as (keyof KeyPatch)[])
    .filter((field) => patch[field] !== undefined)
    .map((field) => `${PATCH_COLUMNS[field].column} = ${next(PATCH_COLUMNS[field].value(patch[field]))}`);
  if (sets.length === 0) return undefined;
  return { text: `UPDATE api_keys SET ${sets.join(', ')} WHERE id = ${next(id)}`, values };
}

/** The values of the insert's optional columns (role, models, expiry, bound), in {@link INSERT_EXTRA_COLUMNS} order. */
export const insertExtras = (key: ApiKeyRecord): unknown[] => [
  key.role ?? 'caller',
  key.models === undefined || key.models === null ? null : JSON.stringify(key.models),
  key.expiresAt ?? null,
  key.maxInFlight ?? null,
  key.webhookUrl ?? null,
];
export const INSERT_EXTRA_COLUMNS = 'role, models, expires_at, max_in_flight, webhook_url';

/** An admin read of one key: its columns and when it was last used. */
export const KEY_WITH_USAGE = `SELECT ${keyColumnsOf('k')}, u.last_used FROM api_keys k LEFT JOIN api_key_usage u ON u.key_id = k.id`;

/**
 * The `listPage` statement for `query`, and a name for its shape (which filters), so each shape is
 * prepared once. Newest first: (created_at, id) descending, read from `before` on.
 */
export function keyListSql(query: KeyListQuery, dialect: Dialect): { shape: string; text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const where: string[] = [];
  if (query.accountId !== undefined) where.push(`k.account_id = ${next(query.accountId)}`);
  if (query.role !== undefined) where.push(`k.role = ${next(query.role)}`);
  if (query.revoked !== undefined) where.push(query.revoked ? 'k.revoked_at IS NOT NULL' : 'k.revoked_at IS NULL');
  // instr/strpos rather than LIKE: no wildcard in the caller's text can widen the match
  if (query.nameContains !== undefined) where.push(`${dialect === 'sqlite' ? 'instr' : 'strpos'}(lower(k.name), lower(${next(query.nameContains)})) > 0`);
  if (query.before) where.push(`(k.created_at, k.id) < (${next(query.before.createdAt)}, ${next(query.before.id)})`);
  const limit = next(query.limit);
  const shape =
    [query.accountId, query.role, query.revoked, query.nameContains, query.before].map((f) => (f === undefined ? 0 : 1)).join('') +
    (query.revoked === true ? 'r' : '');
  const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  return { shape, text: `${KEY_WITH_USAGE}${filter} ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit}`, values };
}
