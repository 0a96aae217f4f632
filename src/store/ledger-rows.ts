/**
 * The `accounts` and `ledger` tables (G200-G205), shared by the SQLite and PostgreSQL stores: row
 * mappings, how a settlement moves an account's totals, and the reconcile queries (plain SQL both
 * engines read alike).
 */
import { placeholderOf, type Dialect } from './key-rows.js';
import { MAX_AVAILABLE_MICRO } from './credit-types.js';
import type { AccountBalance, AccountListQuery, HoldRefusal, LedgerEntry, LedgerKind, LedgerQuery, ReconcileReport, Settlement } from './types.js';

export interface AccountRow {
  id: string;
  name: string;
  created_at: number;
  available_micro: number;
  held_micro: number;
  spent_micro: number;
}

export const accountOfRow = (r: AccountRow): AccountBalance => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  availableMicro: Number(r.available_micro),
  heldMicro: Number(r.held_micro),
  spentMicro: Number(r.spent_micro),
});

export interface LedgerRow {
  id: number;
  account_id: string;
  key_id: string | null;
  kind: LedgerKind;
  amount_micro: number;
  settled_micro: number | null;
  task_id: string | null;
  request_id: string | null;
  model: string | null;
  note: string | null;
  created_at: number;
}

export const LEDGER_COLUMNS = 'id, account_id, key_id, kind, amount_micro, settled_micro, task_id, request_id, model, note, created_at';

export const entryOfRow = (r: LedgerRow): LedgerEntry => ({
  id: Number(r.id),
  accountId: r.account_id,
  keyId: r.key_id,
  kind: r.kind,
  amountMicro: Number(r.amount_micro),
  settledMicro: r.settled_micro === null ? null : Number(r.settled_micro),
  taskId: r.task_id,
  requestId: r.request_id,
  model: r.model,
  note: r.note,
  createdAt: Number(r.created_at),
});

/** A key's spending cap and what its holds and charges already come to (G207). */
export interface KeyCapUse {
  capMicro: number;
  usedMicro: number;
}

/** Why a grant of `amountMicro` (negative: an adjustment) to an account with `availableMicro` is refused (G310, G442), or undefined. */
export function grantRefusal(amountMicro: number, availableMicro: number): 'below_held' | 'above_maximum' | undefined {
  if (amountMicro < 0 && availableMicro + amountMicro < 0) return 'below_held';
  if (amountMicro > 0 && availableMicro + amountMicro > MAX_AVAILABLE_MICRO) return 'above_maximum';
  return undefined;
}

/**
 * Whether `amountMicro` more may be held (G200, G207): the account's available credit first, then
 * the key's spending cap (undefined: the key has none). Every store's holds, task and chat, ask here.
 */
export function holdRefusal(amountMicro: number, availableMicro: number, key: KeyCapUse | undefined): HoldRefusal | undefined {
  if (amountMicro > availableMicro) return { refused: 'credits', availableMicro };
  if (key && key.usedMicro + amountMicro > key.capMicro) return { refused: 'key_cap', capMicro: key.capMicro, usedMicro: key.usedMicro };
  return undefined;
}

/** How settling a hold of `holdMicro` moves money: the entry to append and the account's changes. */
export interface SettlementMove {
  kind: 'capture' | 'release';
  /** The entry's amount: captured (charged), or released. */
  amountMicro: number;
  /** Charged: leaves `held` for `spent`. */
  chargedMicro: number;
}

/**
 * A capture of at most the hold (never below 0; whole micro-credits); a capture of nothing is a
 * release, so a ledger reader sees at a glance that nothing was charged.
 */
export function settlementMove(settle: Settlement, holdMicro: number): SettlementMove {
  const charged = settle.kind === 'capture' ? Math.min(holdMicro, Math.max(0, Math.round(settle.amountMicro))) : 0;
  return charged > 0 ? { kind: 'capture', amountMicro: charged, chargedMicro: charged } : { kind: 'release', amountMicro: holdMicro, chargedMicro: 0 };
}

/** Each account's totals as its ledger gives them, beside the cached ones. */
export const RECONCILE_ACCOUNTS_SQL = `
SELECT a.id, a.available_micro, a.held_micro, a.spent_micro,
  CAST(COALESCE(SUM(CASE l.kind WHEN 'grant' THEN l.amount_micro WHEN 'adjust' THEN l.amount_micro WHEN 'hold' THEN -l.amount_micro
    WHEN 'capture' THEN l.settled_micro - l.amount_micro WHEN 'release' THEN l.settled_micro ELSE 0 END), 0) AS BIGINT) AS l_available,
  CAST(COALESCE(SUM(CASE l.kind WHEN 'hold' THEN l.amount_micro WHEN 'capture' THEN -l.settled_micro WHEN 'release' THEN -l.settled_micro ELSE 0 END), 0) AS BIGINT) AS l_held,
  CAST(COALESCE(SUM(CASE l.kind WHEN 'capture' THEN l.amount_micro ELSE 0 END), 0) AS BIGINT) AS l_spent,
  COUNT(l.id) AS entries
FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
GROUP BY a.id, a.available_micro, a.held_micro, a.spent_micro
ORDER BY a.id`;

/** Each key's held and spent totals as the ledger gives them, beside the cached ones (G207). */
export const RECONCILE_KEYS_SQL = `
SELECT k.id, k.held_micro, k.spent_micro,
  CAST(COALESCE(SUM(CASE l.kind WHEN 'hold' THEN l.amount_micro WHEN 'capture' THEN -l.settled_micro WHEN 'release' THEN -l.settled_micro ELSE 0 END), 0) AS BIGINT) AS l_held,
  CAST(COALESCE(SUM(CASE l.kind WHEN 'capture' THEN l.amount_micro ELSE 0 END), 0) AS BIGINT) AS l_spent
FROM api_keys k LEFT JOIN ledger l ON l.key_id = k.id
GROUP BY k.id, k.held_micro, k.spent_micro
ORDER BY k.id`;

export interface ReconcileKeyRow {
  id: string;
  held_micro: number;
  spent_micro: number;
  l_held: number;
  l_spent: number;
}

export interface ReconcileAccountRow {
  id: string;
  available_micro: number;
  held_micro: number;
  spent_micro: number;
  l_available: number;
  l_held: number;
  l_spent: number;
  entries: number;
}

/** Finished tasks whose hold was never settled. */
export const RECONCILE_UNSETTLED_SQL = `
SELECT t.id FROM tasks t
WHERE t.account_id IS NOT NULL AND t.status IN ('completed', 'failed', 'cancelled')
  AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.task_id = t.id AND l.kind IN ('capture', 'release'))
ORDER BY t.id`;

const SETTLED = "kind IN ('capture', 'release')";

/** Holds settled twice, and settlements of no hold (or of another amount than their hold's): task or request ids. */
export const RECONCILE_DOUBLED_SQL = ['task_id', 'request_id']
  .map(
    (ref) => `
SELECT ${ref} AS ref FROM ledger WHERE ${ref} IS NOT NULL AND ${SETTLED} GROUP BY ${ref} HAVING COUNT(*) > 1
UNION ALL
SELECT s.${ref} AS ref FROM ledger s WHERE s.${ref} IS NOT NULL AND s.${SETTLED}
  AND NOT EXISTS (SELECT 1 FROM ledger h WHERE h.${ref} = s.${ref} AND h.kind = 'hold' AND h.account_id = s.account_id AND h.amount_micro = s.settled_micro)`,
  )
  .join('\nUNION ALL');

/** Holds not settled yet. */
export const RECONCILE_OPEN_SQL = `SELECT (${['task_id', 'request_id']
  .map(
    (ref) => `SELECT COUNT(*) FROM ledger h WHERE h.kind = 'hold' AND h.${ref} IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM ledger s WHERE s.${ref} = h.${ref} AND s.${SETTLED})`,
  )
  .map((q) => `(${q})`)
  .join(' + ')}) AS n`;

/** The report from the reconcile queries' rows. */
export function reconcileReport(
  accounts: ReconcileAccountRow[],
  keys: ReconcileKeyRow[],
  unsettled: Array<{ id: string }>,
  doubled: Array<{ ref: string }>,
  open: number,
): ReconcileReport {
  const mismatched = accounts
    .map((r) => ({
      accountId: r.id,
      cached: { availableMicro: Number(r.available_micro), heldMicro: Number(r.held_micro), spentMicro: Number(r.spent_micro) },
      ledger: { availableMicro: Number(r.l_available), heldMicro: Number(r.l_held), spentMicro: Number(r.l_spent) },
    }))
    .filter(
      (m) => m.cached.availableMicro !== m.ledger.availableMicro || m.cached.heldMicro !== m.ledger.heldMicro || m.cached.spentMicro !== m.ledger.spentMicro,
    );
  const keysMismatched = keys
    .map((r) => ({
      keyId: r.id,
      cached: { heldMicro: Number(r.held_micro), spentMicro: Number(r.spent_micro) },
      ledger: { heldMicro: Number(r.l_held), spentMicro: Number(r.l_spent) },
    }))
    .filter((m) => m.cached.heldMicro !== m.ledger.heldMicro || m.cached.spentMicro !== m.ledger.spentMicro);
  return {
    accounts: accounts.length,
    keysMismatched,
    entries: accounts.reduce((n, r) => n + Number(r.entries), 0),
    mismatched,
    unsettled: unsettled.map((r) => r.id),
    doubled: doubled.map((r) => r.ref),
    open: Number(open),
  };
}

/** Whether the books are right. */
export const reconciled = (r: ReconcileReport): boolean =>
  r.mismatched.length === 0 && r.keysMismatched.length === 0 && r.unsettled.length === 0 && r.doubled.length === 0;

/** `listAccountsPage`'s statement (G309): newest first, from `before` on; a name for its shape. */
export function accountListSql(query: AccountListQuery, dialect: Dialect): { shape: string; text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const where: string[] = [];
  if (query.nameContains !== undefined) where.push(`${dialect === 'sqlite' ? 'instr' : 'strpos'}(lower(name), lower(${next(query.nameContains)})) > 0`);
  if (query.before) where.push(`(created_at, id) < (${next(query.before.createdAt)}, ${next(query.before.id)})`);
  const limit = next(query.limit);
  const shape = `${query.nameContains === undefined ? 0 : 1}${query.before ? 1 : 0}`;
  return {
    shape,
    text: `SELECT * FROM accounts${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    values,
  };
}

/** `ledgerPage`'s statement (G309): one account's entries, newest first, from `beforeId` on (the index ledger_account). */
export function ledgerPageSql(query: LedgerQuery, dialect: Dialect): { shape: string; text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const where = [`account_id = ${next(query.accountId)}`];
  const kinds = query.kinds ?? [];
  if (kinds.length > 0) where.push(`kind IN (${kinds.map(next).join(', ')})`);
  if (query.beforeId !== undefined) where.push(`id < ${next(query.beforeId)}`);
  const limit = next(query.limit);
  return {
    shape: `${kinds.length}.${query.beforeId === undefined ? 0 : 1}`,
    text: `SELECT ${LEDGER_COLUMNS} FROM ledger WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${limit}`,
    values,
  };
}
