import type Database from 'better-sqlite3';
import { KEY_COLUMNS, keyOfRow, type KeyRow } from '../key-rows.js';
import type { ApiKeyRecord, KeyStore, NewAccount } from '../types.js';
import { SqliteLedger } from './credit-store.js';
import type { SqliteReadCache } from './read-cache.js';

/** SQLite API key store; keys are looked up by their SHA-256 hash only. */
export class SqliteKeyStore implements KeyStore {
  private readonly activeByHash: Database.Statement;
  private readonly byHash: Database.Statement;
  private readonly ledger: SqliteLedger;

  /** `active` caches `findActiveByHash`; `onRevoked` drops every other read a key's revocation changes. */
  constructor(private readonly db: Database.Database, private readonly active: SqliteReadCache<ApiKeyRecord>, private readonly onRevoked: () => void) {
    this.activeByHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ? AND revoked_at IS NULL`);
    this.byHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`);
    this.ledger = new SqliteLedger(db);
  }

  async insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at, submit_rate, query_rate, account_id, spend_cap_micro)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      if (account) this.ledger.createAccount(account);
      insert.run(key.id, key.name, key.prefix, key.hash, key.createdAt, key.revokedAt, key.submitRate ?? null, key.queryRate ?? null, key.accountId, key.spendCapMicro ?? null);
    }).immediate();
  }

  async findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const hit = this.active.get(hash);
    if (hit) return hit;
    const row = this.activeByHash.get(hash) as KeyRow | undefined;
    if (!row) return undefined;
    const key = keyOfRow(row);
    this.active.set(hash, key);
    return key;
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.byHash.get(hash) as KeyRow | undefined;
    return row && keyOfRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at`).all() as KeyRow[]).map(keyOfRow);
  }

  async setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean> {
    const changed = this.db.prepare('UPDATE api_keys SET submit_rate = ?, query_rate = ? WHERE id = ?').run(limits.submitRate, limits.queryRate, id).changes === 1;
    if (changed) this.active.clear();
    return changed;
  }

  async setSpendCap(id: string, capMicro: number | null): Promise<boolean> {
    const changed = this.db.prepare('UPDATE api_keys SET spend_cap_micro = ? WHERE id = ?').run(capMicro, id).changes === 1;
    if (changed) this.active.clear();
    return changed;
  }

  async setWebhookUrl(id: string, url: string | null): Promise<boolean> {
    const changed = this.db.prepare('UPDATE api_keys SET webhook_url = ? WHERE id = ?').run(url, id).changes === 1;
    if (changed) this.active.clear();
    return changed;
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const revoked = this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes === 1;
    if (revoked) {
      this.active.clear();
      this.onRevoked();
    }
    return revoked;
  }
}
