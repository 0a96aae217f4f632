import type Database from 'better-sqlite3';
import {
  accountListSql,
  accountOfRow,
  entryOfRow,
  grantRefusal,
  holdRefusal,
  LEDGER_COLUMNS,
  ledgerPageSql,
  RECONCILE_ACCOUNTS_SQL,
  RECONCILE_DOUBLED_SQL,
  RECONCILE_KEYS_SQL,
  RECONCILE_OPEN_SQL,
  RECONCILE_UNSETTLED_SQL,
  reconcileReport,
  settlementMove,
  type AccountRow,
  type KeyCapUse,
  type LedgerRow,
  type ReconcileAccountRow,
  type ReconcileKeyRow,
} from '../ledger-rows.js';
import type {
  AccountBalance,
  AccountListQuery,
  CreditStore,
  GrantOutcome,
  HoldRefusal,
  LedgerEntry,
  LedgerQuery,
  NewAccount,
  NewAuditEntry,
  ReconcileReport,
  Settlement,
} from '../types.js';
import { appendAudit } from './audit-store.js';

/** What a hold or settlement concerns: a task, or a chat request, of a key. */
export interface LedgerRef {
  keyId: string;
  taskId?: string;
  requestId?: string;
  model: string;
}

/**
 * The ledger's writes as statements for use inside a transaction the caller runs (the task store's
 * insert and terminal updates, the credit store's own): each appends one entry and moves the
 * account's cached totals with it.
 */
export class SqliteLedger {
  private readonly appendStmt: Database.Statement;
  private readonly moveStmt: Database.Statement;
  private readonly availableStmt: Database.Statement;
  private readonly insertAccountStmt: Database.Statement;
  private readonly moveKeyStmt: Database.Statement;
  private readonly keyCapStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.appendStmt = db.prepare(`INSERT INTO ledger (account_id, kind, amount_micro, settled_micro, task_id, request_id, model, note, created_at, key_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.moveKeyStmt = db.prepare('UPDATE api_keys SET held_micro = held_micro + ?, spent_micro = spent_micro + ? WHERE id = ?');
    this.keyCapStmt = db.prepare(`SELECT spend_cap_micro AS capMicro, held_micro + spent_micro AS usedMicro FROM api_keys
      WHERE id = ? AND spend_cap_micro IS NOT NULL`);
    this.moveStmt = db.prepare(`UPDATE accounts SET available_micro = available_micro + ?, held_micro = held_micro + ?, spent_micro = spent_micro + ?
      WHERE id = ?`);
    this.availableStmt = db.prepare('SELECT available_micro FROM accounts WHERE id = ?').pluck();
    this.insertAccountStmt = db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)');
  }

  /** The account's available credit; throws for an unknown account (every key has one). */
  available(accountId: string): number {
    const n = this.availableStmt.get(accountId) as number | undefined;
    if (n === undefined) throw new Error(`no account ${accountId}`);
    return n;
  }

  /** Whether `amountMicro` more may be held, as stored now ({@link holdRefusal}). */
  refusal(accountId: string, keyId: string, amountMicro: number): HoldRefusal | undefined {
    const available = this.available(accountId);
    // the key's cap is read only when the balance allows the hold, as on PostgreSQL
    return holdRefusal(amountMicro, available, amountMicro > available ? undefined : this.keyCap(keyId));
  }

  createAccount(account: NewAccount): void {
    this.insertAccountStmt.run(account.id, account.name, account.createdAt);
    if (account.startingMicro !== 0) this.grant(account.id, account.startingMicro, 'starting credit', account.createdAt);
  }

  /** A grant, or a negative adjustment of at most what is available (G310); the entry's id, or why not. */
  grant(accountId: string, amountMicro: number, note: string, now: number): { entryId: number } | { refused: 'no_account' | 'below_held' | 'above_maximum' } {
    const available = this.availableStmt.get(accountId) as number | undefined;
    if (available === undefined) return { refused: 'no_account' };
    const refused = grantRefusal(amountMicro, available);
    if (refused) return { refused };
    const { lastInsertRowid } = this.appendStmt.run(accountId, amountMicro < 0 ? 'adjust' : 'grant', amountMicro, null, null, null, null, note, now, null);
    this.moveStmt.run(amountMicro, 0, 0, accountId);
    return { entryId: Number(lastInsertRowid) };
  }

  hold(accountId: string, amountMicro: number, ref: LedgerRef, now: number): void {
    this.appendHold(accountId, amountMicro, ref, now);
    this.moveAccountHeld(accountId, amountMicro);
    this.moveKeyHeld(ref.keyId, amountMicro);
  }

  /** A hold's ledger entry alone; its totals are moved by {@link moveAccountHeld} and {@link moveKeyHeld} (at once, or summed per batch: G407). */
  appendHold(accountId: string, amountMicro: number, ref: LedgerRef, now: number): void {
    this.appendStmt.run(accountId, 'hold', amountMicro, null, ref.taskId ?? null, ref.requestId ?? null, ref.model, null, now, ref.keyId);
  }

  /** Moves `amountMicro` of the account's available credit to its held total. */
  moveAccountHeld(accountId: string, amountMicro: number): void {
    this.moveStmt.run(-amountMicro, amountMicro, 0, accountId);
  }

  /** Adds `amountMicro` to the key's held total (G207). */
  moveKeyHeld(keyId: string, amountMicro: number): void {
    this.moveKeyStmt.run(amountMicro, 0, keyId);
  }

  /** The key's spending cap and what its holds and charges come to, as stored; undefined when it has no cap (or is unknown). */
  keyCap(keyId: string): KeyCapUse | undefined {
    return this.keyCapStmt.get(keyId) as KeyCapUse | undefined;
  }

  /** The holds of one insert batch, to be written inside its transaction (G407). */
  batch(): BatchHolds {
    return new BatchHolds(this);
  }

  settle(accountId: string, holdMicro: number, settle: Settlement, ref: LedgerRef, now: number): void {
    const move = settlementMove(settle, holdMicro);
    this.appendStmt.run(accountId, move.kind, move.amountMicro, holdMicro, ref.taskId ?? null, ref.requestId ?? null, ref.model, null, now, ref.keyId);
    this.moveStmt.run(holdMicro - move.chargedMicro, -holdMicro, move.chargedMicro, accountId);
    this.moveKeyStmt.run(-holdMicro, move.chargedMicro, ref.keyId);
  }
}

/**
 * The holds of one task insert batch (G407), in its transaction. Each account's balance and each
 * key's cap are read once, at the batch's first refusal check of it; the batch's own holds are kept
 * here and counted in every later check (as the stored totals, moved hold by hold, counted them
 * before: the same refusals), and each account's and key's totals are written once, by {@link write}
 * (the same totals). Each hold's ledger entry is still appended as it is made. Nothing else in the
 * insert transaction reads or writes these totals, so the reads stay exact until {@link write}.
 */
export class BatchHolds {
  /** Per account: its stored available credit (once read) and what the batch has held of it so far. */
  private readonly accounts = new Map<string, Tally<number>>();
  /** Per key: its stored cap and use (once read; null: no cap) and what the batch has held for it so far. */
  private readonly keys = new Map<string, Tally<KeyCapUse | null>>();

  constructor(private readonly ledger: SqliteLedger) {}

  /** As {@link SqliteLedger.refusal}, with this batch's holds so far counted; throws for an unknown account. */
  refusal(accountId: string, keyId: string, amountMicro: number): HoldRefusal | undefined {
    const account = tallyOf(this.accounts, accountId);
    account.stored ??= this.ledger.available(accountId);
    const key = tallyOf(this.keys, keyId);
    if (key.stored === undefined) key.stored = this.ledger.keyCap(keyId) ?? null;
    const cap = key.stored === null ? undefined : { capMicro: key.stored.capMicro, usedMicro: key.stored.usedMicro + key.held };
    return holdRefusal(amountMicro, account.stored - account.held, cap);
  }

  /** The hold's ledger entry now; its totals counted here until {@link write}. */
  hold(accountId: string, amountMicro: number, ref: LedgerRef, now: number): void {
    this.ledger.appendHold(accountId, amountMicro, ref, now);
    tallyOf(this.accounts, accountId).held += amountMicro;
    tallyOf(this.keys, ref.keyId).held += amountMicro;
  }

  /** Moves the totals of every account and key the batch held for, once each; call it last in the transaction. */
  write(): void {
    for (const [id, a] of this.accounts) if (a.held !== 0) this.ledger.moveAccountHeld(id, a.held);
    for (const [id, k] of this.keys) if (k.held !== 0) this.ledger.moveKeyHeld(id, k.held);
  }
}

/** What a batch knows of one account or key: the stored value (undefined until read) and its own holds' sum. */
interface Tally<T> {
  stored: T | undefined;
  held: number;
}

function tallyOf<T>(tallies: Map<string, Tally<T>>, id: string): Tally<T> {
  let t = tallies.get(id);
  if (!t) {
    t = { stored: undefined, held: 0 };
    tallies.set(id, t);
  }
  return t;
}

/** SQLite accounts and ledger (G200-G205); the write lock serialises every change of a balance. */
export class SqliteCreditStore implements CreditStore {
  private readonly ledgerRows: SqliteLedger;
  private readonly requestHoldStmt: Database.Statement;
  private readonly requestSettledStmt: Database.Statement;
  private readonly staleStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.ledgerRows = new SqliteLedger(db);
    this.requestHoldStmt = db.prepare(`SELECT account_id, key_id, amount_micro, model FROM ledger WHERE request_id = ? AND kind = 'hold'`);
    this.requestSettledStmt = db.prepare(`SELECT 1 FROM ledger WHERE request_id = ? AND kind IN ('capture', 'release')`);
    this.staleStmt = db.prepare(`SELECT account_id, key_id, request_id, model, amount_micro FROM ledger h
      WHERE h.kind = 'hold' AND h.request_id IS NOT NULL AND h.created_at < ?
        AND NOT EXISTS (SELECT 1 FROM ledger s WHERE s.request_id = h.request_id AND s.kind IN ('capture', 'release'))`);
  }

  private readonly listCache = new Map<string, Database.Statement>();

  async createAccount(account: NewAccount, audit?: NewAuditEntry): Promise<void> {
    this.db
      .transaction(() => {
        this.ledgerRows.createAccount(account);
        if (audit) appendAudit(this.db, audit);
      })
      .immediate();
  }

  async getAccount(id: string): Promise<AccountBalance | undefined> {
    const row = this.db.prepare('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row && accountOfRow(row);
  }

  async listAccounts(): Promise<AccountBalance[]> {
    return (this.db.prepare('SELECT * FROM accounts ORDER BY created_at, id').all() as AccountRow[]).map(accountOfRow);
  }

  async listAccountsPage(query: AccountListQuery): Promise<AccountBalance[]> {
    return (this.cached(accountListSql(query, 'sqlite')) as AccountRow[]).map(accountOfRow);
  }

  async grant(accountId: string, amountMicro: number, note: string, now: number, audit?: NewAuditEntry): Promise<GrantOutcome> {
    return this.db
      .transaction((): GrantOutcome => {
        const done = this.ledgerRows.grant(accountId, amountMicro, note, now);
        const account = this.db.prepare('SELECT * FROM accounts WHERE id = ?').get(accountId) as AccountRow | undefined;
        if ('refused' in done)
          return done.refused !== 'no_account' && account
            ? { granted: false, refused: done.refused, account: accountOfRow(account) }
            : { granted: false, refused: 'no_account' };
        if (audit) appendAudit(this.db, { ...audit, details: { ...audit.details, entry_id: done.entryId } });
        const entry = this.db.prepare(`SELECT ${LEDGER_COLUMNS} FROM ledger WHERE id = ?`).get(done.entryId) as LedgerRow;
        return { granted: true, entry: entryOfRow(entry), account: accountOfRow(account!) };
      })
      .immediate();
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    return (this.db.prepare(`SELECT ${LEDGER_COLUMNS} FROM ledger WHERE account_id = ? ORDER BY id`).all(accountId) as LedgerRow[]).map(entryOfRow);
  }

  async ledgerPage(query: LedgerQuery): Promise<LedgerEntry[]> {
    return (this.cached(ledgerPageSql(query, 'sqlite')) as LedgerRow[]).map(entryOfRow);
  }

  /** Runs a shared list statement, each text prepared once. */
  private cached({ text, values }: { text: string; values: unknown[] }): unknown[] {
    let stmt = this.listCache.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.listCache.set(text, stmt);
    }
    return stmt.all(...values);
  }

  async holdRequest(
    hold: { accountId: string; keyId: string; requestId: string; model: string; amountMicro: number; createdAt: number },
    enforce: boolean,
  ): Promise<{ held: true } | HoldRefusal> {
    return this.db
      .transaction((): { held: true } | HoldRefusal => {
        const refusal = enforce ? this.ledgerRows.refusal(hold.accountId, hold.keyId, hold.amountMicro) : undefined;
        if (refusal) return refusal;
        this.ledgerRows.hold(hold.accountId, hold.amountMicro, { keyId: hold.keyId, requestId: hold.requestId, model: hold.model }, hold.createdAt);
        return { held: true };
      })
      .immediate();
  }

  async settleRequest(requestId: string, amountMicro: number, now: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        const hold = this.requestHoldStmt.get(requestId) as { account_id: string; key_id: string; amount_micro: number; model: string } | undefined;
        if (!hold || this.requestSettledStmt.get(requestId) !== undefined) return false;
        this.ledgerRows.settle(hold.account_id, hold.amount_micro, { kind: 'capture', amountMicro }, { keyId: hold.key_id, requestId, model: hold.model }, now);
        return true;
      })
      .immediate();
  }

  async releaseStaleRequests(before: number, now: number): Promise<number> {
    return this.db
      .transaction(() => {
        const stale = this.staleStmt.all(before) as Array<{ account_id: string; key_id: string; request_id: string; model: string; amount_micro: number }>;
        for (const h of stale)
          this.ledgerRows.settle(h.account_id, h.amount_micro, { kind: 'release' }, { keyId: h.key_id, requestId: h.request_id, model: h.model }, now);
        return stale.length;
      })
      .immediate();
  }

  async usage(accountId: string, since: number): Promise<Array<{ model: string; settled: number; spentMicro: number }>> {
    return this.db
      .prepare(`SELECT model, COUNT(*) AS settled, SUM(CASE kind WHEN 'capture' THEN amount_micro ELSE 0 END) AS spentMicro
      FROM ledger WHERE account_id = ? AND created_at >= ? AND kind IN ('capture', 'release') GROUP BY model ORDER BY model`)
      .all(accountId, since) as Array<{ model: string; settled: number; spentMicro: number }>;
  }

  async reconcile(): Promise<ReconcileReport> {
    // one read transaction: every query sees the same snapshot
    return this.db
      .transaction(() =>
        reconcileReport(
          this.db.prepare(RECONCILE_ACCOUNTS_SQL).all() as ReconcileAccountRow[],
          this.db.prepare(RECONCILE_KEYS_SQL).all() as ReconcileKeyRow[],
          this.db.prepare(RECONCILE_UNSETTLED_SQL).all() as Array<{ id: string }>,
          this.db.prepare(RECONCILE_DOUBLED_SQL).all() as Array<{ ref: string }>,
          (this.db.prepare(RECONCILE_OPEN_SQL).get() as { n: number }).n,
        ),
      )
      .deferred();
  }
}
