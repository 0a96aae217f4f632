import type Database from 'better-sqlite3';
import { idempotencyTaskKey, type IdempotencyBegin, type IdempotencyStore } from '../types.js';

interface Row {
  fingerprint: string;
  status_code: number | null;
  response: string | null;
  created_at: number;
}

/** SQLite Idempotency-Key records; `begin` reads and claims in one IMMEDIATE transaction. */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly getStmt: Database.Statement;
  private readonly claimStmt: Database.Statement;
  private readonly completeStmt: Database.Statement;
  private readonly abandonStmt: Database.Statement;
  private readonly purgeStmt: Database.Statement;
  private readonly taskStmt: Database.Statement;
  private readonly beginTx: Database.Transaction<
    (keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number, expiredBefore: number) => IdempotencyBegin
  >;

  constructor(db: Database.Database) {
    this.getStmt = db.prepare('SELECT fingerprint, status_code, response, created_at FROM idempotency_keys WHERE key_id = ? AND idem_key = ?');
    this.claimStmt = db.prepare(`INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, status_code, response, created_at)
      VALUES (?, ?, ?, NULL, NULL, ?) ON CONFLICT (key_id, idem_key) DO UPDATE SET
      fingerprint = excluded.fingerprint, status_code = NULL, response = NULL, created_at = excluded.created_at`);
    this.completeStmt = db.prepare('UPDATE idempotency_keys SET status_code = ?, response = ? WHERE key_id = ? AND idem_key = ?');
    // a claim whose request committed its task stays, to be recovered (G266)
    this.abandonStmt = db.prepare(`DELETE FROM idempotency_keys AS k WHERE key_id = ? AND idem_key = ? AND response IS NULL
      AND NOT EXISTS (SELECT 1 FROM tasks WHERE idempotency_key = k.key_id || ':' || k.created_at || ':' || k.idem_key)`);
    this.purgeStmt = db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?');
    this.taskStmt = db.prepare('SELECT id FROM tasks WHERE idempotency_key = ?').pluck();
    this.beginTx = db.transaction((keyId, idemKey, fingerprint, now, staleBefore, expiredBefore): IdempotencyBegin => {
      const row = this.getStmt.get(keyId, idemKey) as Row | undefined;
      const current = row && row.created_at >= expiredBefore;
      if (row && current) {
        const mine = row.fingerprint === fingerprint;
        if (row.response !== null && row.status_code !== null)
          return mine ? { state: 'replay', statusCode: row.status_code, response: row.response } : { state: 'mismatch' };
        // did its request commit a task (and then die, or answer an error, G266)?
        const taskId = this.taskStmt.get(idempotencyTaskKey(keyId, idemKey, row.created_at)) as string | undefined;
        if (taskId !== undefined) return mine ? { state: 'recovered', taskId } : { state: 'mismatch' };
        if (row.created_at >= staleBefore) return mine ? { state: 'in_progress' } : { state: 'mismatch' };
      }
      this.claimStmt.run(keyId, idemKey, fingerprint, now);
      return { state: 'new' };
    });
  }

  async begin(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number, expiredBefore: number): Promise<IdempotencyBegin> {
    return this.beginTx.immediate(keyId, idemKey, fingerprint, now, staleBefore, expiredBefore);
  }

  async complete(keyId: string, idemKey: string, statusCode: number, response: string): Promise<void> {
    this.completeStmt.run(statusCode, response, keyId, idemKey);
  }

  async abandon(keyId: string, idemKey: string): Promise<void> {
    this.abandonStmt.run(keyId, idemKey);
  }

  async purge(before: number): Promise<number> {
    return this.purgeStmt.run(before).changes;
  }
}
