/**
 * The `audit_log` table (G302), shared by the SQLite and PostgreSQL stores: the row mapping, the
 * append written inside a change's own transaction, and the list statement.
 */
import { placeholderOf, type Dialect } from './key-rows.js';
import type { AuditAction, AuditEntry, AuditQuery, NewAuditEntry } from './types.js';

export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  /** The actor key's name, joined from api_keys as the entries are read (G449). */
  actor_name: string | null;
  action: AuditAction;
  target: string;
  request_id: string | null;
  details: string;
}

export const auditOfRow = (r: AuditRow): AuditEntry => ({
  id: Number(r.id),
  at: Number(r.at),
  actor: r.actor,
  actorName: r.actor_name ?? null,
  action: r.action,
  target: r.target,
  requestId: r.request_id,
  details: JSON.parse(r.details) as Record<string, unknown>,
});

/** The append of one entry, for a statement of the change's transaction. */
export function auditInsert(entry: NewAuditEntry, dialect: Dialect): { text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  return {
    text: `INSERT INTO audit_log (at, actor, action, target, request_id, details) VALUES (${[1, 2, 3, 4, 5, 6].map(mark).join(', ')})`,
    values: [entry.at, entry.actor, entry.action, entry.target, entry.requestId, JSON.stringify(entry.details)],
  };
}

/** The list statement for `query` (newest first, from `beforeId` on) and a name for its shape. */
export function auditListSql(query: AuditQuery, dialect: Dialect): { shape: string; text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const filters: Array<[unknown, () => string]> = [
    [query.actor, () => `a.actor = ${next(query.actor)}`],
    [query.action, () => `a.action = ${next(query.action)}`],
    [query.target, () => `a.target = ${next(query.target)}`],
    [query.since, () => `a.at >= ${next(query.since)}`],
    [query.until, () => `a.at < ${next(query.until)}`],
    [query.beforeId, () => `a.id < ${next(query.beforeId)}`],
  ];
  const where = filters.filter(([v]) => v !== undefined).map(([, sql]) => sql());
  const limit = next(query.limit);
  const shape = filters.map(([v]) => (v === undefined ? 0 : 1)).join('');
  // the actor's name as it is now (G449): an admin key's id names a row of api_keys; cli and bootstrap none
  const from = 'audit_log a LEFT JOIN api_keys k ON k.id = a.actor';
  return {
    shape,
    text: `SELECT a.*, k.name AS actor_name FROM ${from}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id DESC LIMIT ${limit}`,
    values,
  };
}
