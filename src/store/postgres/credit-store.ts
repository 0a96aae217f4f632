import type pg from 'pg';
import { auditInsert } from '../audit-rows.js';
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
  type AccountRow,
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
  NewTask,
  ReconcileReport,
} from '../types.js';
import { inTransaction } from './transaction.js';

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** A new account and its starting grant, in one statement. */
export function createAccountQuery(account: NewAccount): pg.QueryConfig {
  return {
    name: 'mg_accounts_insert',
    text: `WITH a AS (INSERT INTO accounts (id, name, created_at, available_micro) VALUES ($1, $2, $3, $4) RETURNING id)
      INSERT INTO ledger (account_id, kind, amount_micro, note, created_at) SELECT id, 'grant', $4, 'starting credit', $3 FROM a WHERE $4::bigint <> 0`,
    values: [account.id, account.name, account.createdAt, account.startingMicro],
  };
}

/** The holds of newly inserted tasks: their ledger entries and their accounts' totals, in one statement. */
export function taskHoldsQuery(tasks: readonly NewTask[]): pg.QueryConfig | undefined {
  const held = tasks.filter((t) => t.charge);
  if (held.length === 0) return undefined;
  return {
    name: 'mg_ledger_task_holds',
    text: `WITH h AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[]) AS h(account_id, amount, task_id, model, created_at, key_id)),
    l AS (INSERT INTO ledger (account_id, key_id, kind, amount_micro, task_id, model, created_at) SELECT account_id, key_id, 'hold', amount, task_id, model, created_at FROM h),
    a AS (UPDATE accounts a SET available_micro = a.available_micro - s.amount, held_micro = a.held_micro + s.amount
      FROM (SELECT account_id, SUM(amount)::bigint AS amount FROM h GROUP BY account_id) s WHERE a.id = s.account_id RETURNING a.id)
    UPDATE api_keys k SET held_micro = k.held_micro + s.amount
    FROM (SELECT key_id, SUM(amount)::bigint AS amount FROM h GROUP BY key_id) s WHERE k.id = s.key_id AND (SELECT COUNT(*) FROM a) >= 0`,
    values: [
      held.map((t) => t.charge!.accountId),
      held.map((t) => t.charge!.holdMicro),
      held.map((t) => t.id),
      held.map((t) => t.model),
      held.map((t) => t.createdAt),
      held.map((t) => t.ownerKeyId),
    ],
  };
}

/**
 * The settlement CTEs appended to a terminal conditional update `t` (G201): from the row it
 * updated (none when its guard failed), one capture or release entry, the account's totals, then
 * the key's (G207; read from the account's update, so the account's row is always locked first).
 * `$kind` and `$amount` are the parameters holding the settlement's kind and captured amount.
 */
export const settleCtes = (kind: string, amount: string, now: string): string => `,
s AS (SELECT t.id, t.account_id, t.owner_key_id, t.model, t.hold_micro AS hold,
  CASE WHEN ${kind} = 'capture' THEN LEAST(GREATEST(${amount}::bigint, 0), t.hold_micro) ELSE 0 END AS charged
  FROM t WHERE t.account_id IS NOT NULL),
l AS (INSERT INTO ledger (account_id, key_id, kind, amount_micro, settled_micro, task_id, model, created_at)
  SELECT account_id, owner_key_id, CASE WHEN charged > 0 THEN 'capture' ELSE 'release' END, CASE WHEN charged > 0 THEN charged ELSE hold END, hold, id, model, ${now}::bigint FROM s),
a AS (UPDATE accounts SET available_micro = available_micro + s.hold - s.charged, held_micro = held_micro - s.hold, spent_micro = spent_micro + s.charged
  FROM s WHERE accounts.id = s.account_id RETURNING s.owner_key_id, s.hold, s.charged),
k AS (UPDATE api_keys SET held_micro = api_keys.held_micro - a.hold, spent_micro = api_keys.spent_micro + a.charged
  FROM a WHERE api_keys.id = a.owner_key_id)`;

/** PostgreSQL accounts and ledger (G200-G205): an account's row lock serialises changes of its balance across processes. */
export class PostgresCreditStore implements CreditStore {
  constructor(private readonly pool: pg.Pool) {}

  async createAccount(account: NewAccount, audit?: NewAuditEntry): Promise<void> {
    if (!audit) {
      await this.pool.query(createAccountQuery(account));
      return;
    }
    await inTransaction(this.pool, async (client) => {
      await client.query(createAccountQuery(account));
      await client.query(auditInsert(audit, 'postgres'));
    });
  }

  async getAccount(id: string): Promise<AccountBalance | undefined> {
    const { rows } = await this.pool.query<AccountRow>({ name: 'mg_accounts_get', text: 'SELECT * FROM accounts WHERE id = $1', values: [id] });
    return rows[0] && accountOfRow(rows[0]);
  }

  async listAccounts(): Promise<AccountBalance[]> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id COLLATE "C"');
    return rows.map(accountOfRow);
  }

  async listAccountsPage(query: AccountListQuery): Promise<AccountBalance[]> {
    const { shape, text, values } = accountListSql(query, 'postgres');
    const { rows } = await this.pool.query<AccountRow>({ name: `mg_accounts_list_${shape}`, text, values });
    return rows.map(accountOfRow);
  }

  async grant(accountId: string, amountMicro: number, note: string, now: number, audit?: NewAuditEntry): Promise<GrantOutcome> {
    return inTransaction(this.pool, async (client): Promise<GrantOutcome> => {
      // the account's row locked, as holds lock it: what is available cannot change until the commit (G310)
      const available = (await lockedAvailables(client, [accountId])).get(accountId);
      if (available === undefined) return { granted: false, refused: 'no_account' };
      const refused = grantRefusal(amountMicro, available);
      if (refused) {
        const { rows } = await client.query<AccountRow>({ name: 'mg_accounts_get', text: 'SELECT * FROM accounts WHERE id = $1', values: [accountId] });
        return { granted: false, refused, account: accountOfRow(rows[0]!) };
      }
      const {
        rows: [entry],
      } = await client.query<LedgerRow>({
        name: 'mg_ledger_grant_v2',
        text: `INSERT INTO ledger (account_id, kind, amount_micro, note, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${LEDGER_COLUMNS}`,
        values: [accountId, amountMicro < 0 ? 'adjust' : 'grant', amountMicro, note, now],
      });
      const {
        rows: [account],
      } = await client.query<AccountRow>({
        name: 'mg_accounts_grant',
        text: 'UPDATE accounts SET available_micro = available_micro + $2 WHERE id = $1 RETURNING *',
        values: [accountId, amountMicro],
      });
      if (audit) await client.query(auditInsert({ ...audit, details: { ...audit.details, entry_id: Number(entry!.id) } }, 'postgres'));
      return { granted: true, entry: entryOfRow(entry!), account: accountOfRow(account!) };
    });
  }

  async ledgerPage(query: LedgerQuery): Promise<LedgerEntry[]> {
    const { shape, text, values } = ledgerPageSql(query, 'postgres');
    const { rows } = await this.pool.query<LedgerRow>({ name: `mg_ledger_page_${shape}`, text, values });
    return rows.map(entryOfRow);
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    const { rows } = await this.pool.query<LedgerRow>({
      name: 'mg_ledger_of_account',
      text: `SELECT ${LEDGER_COLUMNS} FROM ledger WHERE account_id = $1 ORDER BY id`,
      values: [accountId],
    });
    return rows.map(entryOfRow);
  }

  async holdRequest(
    hold: { accountId: string; keyId: string; requestId: string; model: string; amountMicro: number; createdAt: number },
    enforce: boolean,
  ): Promise<{ held: true } | HoldRefusal> {
    return inTransaction(this.pool, async (client): Promise<{ held: true } | HoldRefusal> => {
      if (enforce) {
        const available = await lockedAvailable(client, hold.accountId);
        // the key's cap is read (and locked) only when the balance allows the hold
        const key = hold.amountMicro > available ? undefined : (await lockedKeyCaps(client, [hold.keyId])).get(hold.keyId);
        const refusal = holdRefusal(hold.amountMicro, available, key);
        if (refusal) return refusal;
      }
      await client.query({
        name: 'mg_ledger_request_hold',
        text: `WITH l AS (INSERT INTO ledger (account_id, key_id, kind, amount_micro, request_id, model, created_at) VALUES ($1, $6, 'hold', $2, $3, $4, $5)),
          a AS (UPDATE accounts SET available_micro = available_micro - $2, held_micro = held_micro + $2 WHERE id = $1 RETURNING id)
          UPDATE api_keys SET held_micro = held_micro + $2 WHERE id = $6 AND EXISTS (SELECT 1 FROM a)`,
        values: [hold.accountId, hold.amountMicro, hold.requestId, hold.model, hold.createdAt, hold.keyId],
      });
      return { held: true };
    });
  }

  async settleRequest(requestId: string, amountMicro: number, now: number): Promise<boolean> {
    // a second settlement of the hold conflicts with the first on the unique index and appends nothing
    const { rows } = await this.pool.query<{ n: number }>({
      name: 'mg_ledger_request_settle',
      text: `WITH s AS (SELECT account_id, key_id, model, amount_micro AS hold, LEAST(GREATEST($2::bigint, 0), amount_micro) AS charged
          FROM ledger WHERE request_id = $1 AND kind = 'hold'),
        l AS (INSERT INTO ledger (account_id, key_id, kind, amount_micro, settled_micro, request_id, model, created_at)
          SELECT account_id, key_id, CASE WHEN charged > 0 THEN 'capture' ELSE 'release' END, CASE WHEN charged > 0 THEN charged ELSE hold END, hold, $1, model, $3 FROM s
          ON CONFLICT DO NOTHING RETURNING account_id, key_id, settled_micro AS hold, CASE kind WHEN 'capture' THEN amount_micro ELSE 0 END AS charged),
        a AS (UPDATE accounts SET available_micro = available_micro + l.hold - l.charged, held_micro = held_micro - l.hold, spent_micro = spent_micro + l.charged
          FROM l WHERE accounts.id = l.account_id RETURNING l.key_id, l.hold, l.charged),
        k AS (UPDATE api_keys SET held_micro = api_keys.held_micro - a.hold, spent_micro = api_keys.spent_micro + a.charged FROM a WHERE api_keys.id = a.key_id)
        SELECT COUNT(*) AS n FROM l`,
      values: [requestId, amountMicro, now],
    });
    return rows[0]!.n === 1;
  }

  async releaseStaleRequests(before: number, now: number): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      const { rows: stale } = await client.query<{ account_id: string; request_id: string }>({
        name: 'mg_ledger_stale_holds',
        text: `SELECT account_id, request_id FROM ledger h WHERE h.kind = 'hold' AND h.request_id IS NOT NULL AND h.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM ledger s WHERE s.request_id = h.request_id AND s.kind IN ('capture', 'release')) LIMIT 1000`,
        values: [before],
      });
      if (stale.length === 0) return 0;
      // the accounts' rows first, in id order, as every other writer of balances takes them
      await lockedAvailables(client, [...new Set(stale.map((r) => r.account_id))]);
      // a settlement committed meanwhile conflicts on the unique index: that hold is skipped, and
      // only the releases actually appended move the totals
      const { rows } = await client.query<{ n: number }>({
        name: 'mg_ledger_release_stale',
        text: `WITH h AS (SELECT account_id, key_id, request_id, model, amount_micro FROM ledger WHERE kind = 'hold' AND request_id = ANY($1::text[])),
          l AS (INSERT INTO ledger (account_id, key_id, kind, amount_micro, settled_micro, request_id, model, created_at)
            SELECT account_id, key_id, 'release', amount_micro, amount_micro, request_id, model, $2 FROM h ON CONFLICT DO NOTHING RETURNING account_id, key_id, amount_micro),
          a AS (UPDATE accounts SET available_micro = available_micro + s.amount, held_micro = held_micro - s.amount
            FROM (SELECT account_id, SUM(amount_micro)::bigint AS amount FROM l GROUP BY account_id) s WHERE accounts.id = s.account_id RETURNING accounts.id),
          k AS (UPDATE api_keys SET held_micro = api_keys.held_micro - s.amount
            FROM (SELECT key_id, SUM(amount_micro)::bigint AS amount FROM l GROUP BY key_id) s WHERE api_keys.id = s.key_id AND (SELECT COUNT(*) FROM a) >= 0)
          SELECT COUNT(*) AS n FROM l`,
        values: [stale.map((r) => r.request_id), now],
      });
      return rows[0]!.n;
    });
  }

  async usage(accountId: string, since: number): Promise<Array<{ model: string; settled: number; spentMicro: number }>> {
    const { rows } = await this.pool.query<{ model: string; settled: number; spentMicro: number }>({
      name: 'mg_ledger_usage',
      text: `SELECT model, COUNT(*) AS settled, SUM(CASE kind WHEN 'capture' THEN amount_micro ELSE 0 END)::bigint AS "spentMicro"
        FROM ledger WHERE account_id = $1 AND created_at >= $2 AND kind IN ('capture', 'release') GROUP BY model ORDER BY model COLLATE "C"`,
      values: [accountId, since],
    });
    return rows;
  }

  async reconcile(): Promise<ReconcileReport> {
    // one snapshot for every query
    return inTransaction(
      this.pool,
      async (client) =>
        reconcileReport(
          (await client.query<ReconcileAccountRow>(RECONCILE_ACCOUNTS_SQL)).rows,
          (await client.query<ReconcileKeyRow>(RECONCILE_KEYS_SQL)).rows,
          (await client.query<{ id: string }>(RECONCILE_UNSETTLED_SQL)).rows,
          (await client.query<{ ref: string }>(RECONCILE_DOUBLED_SQL)).rows,
          (await client.query<{ n: number }>(RECONCILE_OPEN_SQL)).rows[0]!.n,
        ),
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}

/** The available credit of accounts, their rows locked until the transaction ends (in id order: no deadlock between batches). */
export async function lockedAvailables(client: Queryable, accountIds: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await client.query<{ id: string; available_micro: number }>({
    name: 'mg_accounts_lock',
    text: 'SELECT id, available_micro FROM accounts WHERE id = ANY($1::text[]) ORDER BY id COLLATE "C" FOR UPDATE',
    values: [[...accountIds]],
  });
  return new Map(rows.map((r) => [r.id, Number(r.available_micro)]));
}

/** The spending caps of those of these keys that have one, and what they used, their rows locked (in id order, after the accounts'; G207). */
export async function lockedKeyCaps(client: Queryable, keyIds: readonly string[]): Promise<Map<string, { capMicro: number; usedMicro: number }>> {
  const { rows } = await client.query<{ id: string; cap: number; used: number }>({
    name: 'mg_keys_lock_caps',
    text: `SELECT id, spend_cap_micro AS cap, held_micro + spent_micro AS used FROM api_keys
      WHERE id = ANY($1::text[]) AND spend_cap_micro IS NOT NULL ORDER BY id COLLATE "C" FOR UPDATE`,
    values: [[...keyIds]],
  });
  return new Map(rows.map((r) => [r.id, { capMicro: Number(r.cap), usedMicro: Number(r.used) }]));
}

async function lockedAvailable(client: Queryable, accountId: string): Promise<number> {
  const available = (await lockedAvailables(client, [accountId])).get(accountId);
  if (available === undefined) throw new Error(`no account ${accountId}`);
  return available;
}
