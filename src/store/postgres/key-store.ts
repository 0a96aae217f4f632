import type pg from 'pg';
import { auditInsert } from '../audit-rows.js';
import { INSERT_EXTRA_COLUMNS, insertExtras, KEY_COLUMNS, KEY_WITH_USAGE, keyColumnsOf, keyListSql, keyOfRow, keyUpdateSql, type KeyRow } from '../key-rows.js';
import type { ApiKeyRecord, KeyListQuery, KeyPatch, KeyStore, NewAccount, NewAuditEntry } from '../types.js';
import { createAccountQuery } from './credit-store.js';
import { inTransaction } from './transaction.js';
import { TurnBatch } from './turn-batch.js';

/** The active keys of these hashes: by their current secret, or by one a rotation replaced (with its end, G307). */
const ACTIVE_SQL = `SELECT k.hash AS h, ${keyColumnsOf('k')}, NULL::bigint AS grace_until FROM api_keys k WHERE k.hash = ANY($1::text[]) AND k.revoked_at IS NULL
UNION ALL
SELECT g.hash AS h, ${keyColumnsOf('k')}, g.valid_until AS grace_until FROM api_key_grace g JOIN api_keys k ON k.id = g.key_id
WHERE g.hash = ANY($1::text[]) AND k.revoked_at IS NULL`;

/**
 * PostgreSQL API key store; keys are looked up by their SHA-256 hash only. No read cache: a
 * revocation by any process is seen by the next lookup of every process (G182). The active-key
 * lookups of one event-loop turn are read in one query (G193).
 */
export class PostgresKeyStore implements KeyStore {
  private readonly activeByHash = new TurnBatch<string, ApiKeyRecord>(
    (hash) => hash,
    (hashes) => this.readActive(hashes),
  );

  constructor(private readonly pool: pg.Pool) {}

  async insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount, audit?: NewAuditEntry): Promise<void> {
    const insert: pg.QueryConfig = {
      name: 'mg_keys_insert_v2',
      text: `INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at, submit_rate, query_rate, account_id, spend_cap_micro, ${INSERT_EXTRA_COLUMNS})
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      values: [
        key.id,
        key.name,
        key.prefix,
        key.hash,
        key.createdAt,
        key.revokedAt,
        key.submitRate ?? null,
        key.queryRate ?? null,
        key.accountId,
        key.spendCapMicro ?? null,
        ...insertExtras(key),
      ],
    };
    if (!account && !audit) {
      await this.pool.query(insert);
      return;
    }
    await inTransaction(this.pool, async (client) => {
      if (account) await client.query(createAccountQuery(account));
      await client.query(insert);
      if (audit) await client.query(auditInsert(audit, 'postgres'));
    });
  }

  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.activeByHash.get(hash);
  }

  private async readActive(hashes: string[]): Promise<Map<string, ApiKeyRecord>> {
    const { rows } = await this.pool.query<KeyRow & { h: string }>({ name: 'mg_keys_active_v2', text: ACTIVE_SQL, values: [hashes] });
    return new Map(rows.map(({ h, ...row }) => [h, keyOfRow(row)]));
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.one({ name: 'mg_keys_by_hash_v2', text: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, values: [hash] });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id COLLATE "C"`);
    return rows.map(keyOfRow);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    return this.one({ name: 'mg_keys_get', text: `${KEY_WITH_USAGE} WHERE k.id = $1`, values: [id] });
  }

  async listPage(query: KeyListQuery): Promise<ApiKeyRecord[]> {
    const { shape, text, values } = keyListSql(query, 'postgres');
    const { rows } = await this.pool.query<KeyRow>({ name: `mg_keys_list_${shape}`, text, values });
    return rows.map(keyOfRow);
  }

  async update(id: string, patch: KeyPatch, audit?: NewAuditEntry): Promise<ApiKeyRecord | undefined> {
    const sql = keyUpdateSql(id, patch, 'postgres');
    const changed = await inTransaction(this.pool, async (client) => {
      const { rowCount } = sql ? await client.query(sql) : await client.query('SELECT 1 FROM api_keys WHERE id = $1', [id]);
      if (rowCount !== 1) return false;
      if (audit) await client.query(auditInsert(audit, 'postgres'));
      return true;
    });
    return changed ? this.get(id) : undefined;
  }

  async setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean> {
    return (await this.update(id, limits)) !== undefined;
  }

  async setSpendCap(id: string, capMicro: number | null): Promise<boolean> {
    return (await this.update(id, { spendCapMicro: capMicro })) !== undefined;
  }

  async setWebhookUrl(id: string, url: string | null): Promise<boolean> {
    return (await this.update(id, { webhookUrl: url })) !== undefined;
  }

  async rotate(id: string, next: { hash: string; prefix: string }, graceUntil: number | null, now: number, audit?: NewAuditEntry): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      // the key's row locked: a revocation or another rotation waits for this one
      const { rows } = await client.query<{ hash: string }>('SELECT hash FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE', [id]);
      const old = rows[0]?.hash;
      if (old === undefined) return false;
      await client.query('DELETE FROM api_key_grace WHERE valid_until <= $1', [now]);
      if (graceUntil !== null && graceUntil > now)
        await client.query('INSERT INTO api_key_grace (hash, key_id, valid_until) VALUES ($1, $2, $3)', [old, id, graceUntil]);
      await client.query('UPDATE api_keys SET hash = $1, prefix = $2 WHERE id = $3', [next.hash, next.prefix, id]);
      if (audit) await client.query(auditInsert(audit, 'postgres'));
      return true;
    });
  }

  async revoke(id: string, now: number, audit?: NewAuditEntry): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id]);
      if (rowCount !== 1) return false;
      await client.query('DELETE FROM api_key_grace WHERE key_id = $1', [id]);
      if (audit) await client.query(auditInsert(audit, 'postgres'));
      return true;
    });
  }

  async recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void> {
    if (uses.size === 0) return;
    // in key order: two processes' batches lock the rows they share in the same order (no deadlock)
    const sorted = [...uses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    await this.pool.query({
      name: 'mg_keys_last_used',
      text: `INSERT INTO api_key_usage (key_id, last_used) SELECT * FROM unnest($1::text[], $2::bigint[])
        ON CONFLICT (key_id) DO UPDATE SET last_used = GREATEST(api_key_usage.last_used, excluded.last_used)`,
      values: [sorted.map(([id]) => id), sorted.map(([, at]) => at)],
    });
  }

  private async one(query: pg.QueryConfig): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(query);
    return rows[0] && keyOfRow(rows[0]);
  }
}
