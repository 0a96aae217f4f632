import type Database from 'better-sqlite3';
import { INSERT_EXTRA_COLUMNS, insertExtras, KEY_COLUMNS, KEY_WITH_USAGE, keyColumnsOf, keyListSql, keyOfRow, keyUpdateSql, type KeyRow } from '../key-rows.js';
import type { ApiKeyRecord, KeyListQuery, KeyPatch, KeyStore, NewAccount, NewAuditEntry } from '../types.js';
import { appendAudit } from './audit-store.js';
import { SqliteLedger } from './credit-store.js';
import type { SqliteReadCache } from './read-cache.js';

/** SQLite API key store; keys are looked up by their SHA-256 hash only. */
export class SqliteKeyStore implements KeyStore {
  private readonly activeByHash: Database.Statement;
  private readonly byGraceHash: Database.Statement;
  private readonly byHash: Database.Statement;
  private readonly ledger: SqliteLedger;
  private readonly listCache = new Map<string, Database.Statement>();

  /** `active` caches `findActiveByHash`; `onRevoked` drops every other read a key's revocation (or a new secret) changes. */
  constructor(
    private readonly db: Database.Database,
    private readonly active: SqliteReadCache<ApiKeyRecord>,
    private readonly onRevoked: () => void,
  ) {
    this.activeByHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ? AND revoked_at IS NULL`);
    // a secret a rotation replaced (G307): asked only when no key has the hash as its current secret
    this.byGraceHash = db.prepare(`SELECT ${keyColumnsOf('k')}, g.valid_until AS grace_until FROM api_key_grace g
      JOIN api_keys k ON k.id = g.key_id WHERE g.hash = ? AND k.revoked_at IS NULL`);
    this.byHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`);
    this.ledger = new SqliteLedger(db);
  }

  async insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount, audit?: NewAuditEntry): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at, submit_rate, query_rate, account_id, spend_cap_micro,
      ${INSERT_EXTRA_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db
      .transaction(() => {
        if (account) this.ledger.createAccount(account);
        insert.run(
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
        );
        if (audit) appendAudit(this.db, audit);
      })
      .immediate();
  }

  async findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const hit = this.active.get(hash);
    if (hit) return hit;
    const row = (this.activeByHash.get(hash) ?? this.byGraceHash.get(hash)) as KeyRow | undefined;
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

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.db.prepare(`${KEY_WITH_USAGE} WHERE k.id = ?`).get(id) as KeyRow | undefined;
    return row && keyOfRow(row);
  }

  async listPage(query: KeyListQuery): Promise<ApiKeyRecord[]> {
    const { shape, text, values } = keyListSql(query, 'sqlite');
    let stmt = this.listCache.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.listCache.set(shape, stmt);
    }
    return (stmt.all(...values) as KeyRow[]).map(keyOfRow);
  }

  async update(id: string, patch: KeyPatch, audit?: NewAuditEntry): Promise<ApiKeyRecord | undefined> {
    const sql = keyUpdateSql(id, patch, 'sqlite');
    const exists = this.db.prepare('SELECT 1 FROM api_keys WHERE id = ?');
    const changed = this.db
      .transaction(() => {
        if (sql ? this.db.prepare(sql.text).run(...sql.values).changes !== 1 : exists.get(id) === undefined) return false;
        if (audit) appendAudit(this.db, audit);
        return true;
      })
      .immediate();
    if (!changed) return undefined;
    // a new expiry changes the poll path's cached answers too (G305)
    if (patch.expiresAt !== undefined) this.forgetKeys();
    else this.active.clear();
    return this.get(id);
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
    const current = this.db.prepare('SELECT hash FROM api_keys WHERE id = ? AND revoked_at IS NULL').pluck();
    const rotated = this.db
      .transaction(() => {
        const old = current.get(id) as string | undefined;
        if (old === undefined) return false;
        this.db.prepare('DELETE FROM api_key_grace WHERE valid_until <= ?').run(now);
        if (graceUntil !== null && graceUntil > now)
          this.db.prepare('INSERT INTO api_key_grace (hash, key_id, valid_until) VALUES (?, ?, ?)').run(old, id, graceUntil);
        this.db.prepare('UPDATE api_keys SET hash = ?, prefix = ? WHERE id = ?').run(next.hash, next.prefix, id);
        if (audit) appendAudit(this.db, audit);
        return true;
      })
      .immediate();
    if (rotated) this.forgetKeys();
    return rotated;
  }

  async revoke(id: string, now: number, audit?: NewAuditEntry): Promise<boolean> {
    const revoked = this.db
      .transaction(() => {
        if (this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes !== 1) return false;
        this.db.prepare('DELETE FROM api_key_grace WHERE key_id = ?').run(id);
        if (audit) appendAudit(this.db, audit);
        return true;
      })
      .immediate();
    if (revoked) this.forgetKeys();
    return revoked;
  }

  async recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void> {
    if (uses.size === 0) return;
    const upsert = this.db.prepare(`INSERT INTO api_key_usage (key_id, last_used) VALUES (?, ?)
      ON CONFLICT (key_id) DO UPDATE SET last_used = MAX(last_used, excluded.last_used)`);
    this.db
      .transaction(() => {
        for (const [id, at] of uses) upsert.run(id, at);
      })
      .immediate();
  }

  /** A secret stopped being accepted: every cached read by a hash goes. */
  private forgetKeys(): void {
    this.active.clear();
    this.onRevoked();
  }
}
