import type Database from 'better-sqlite3';
import { SECRET_COLUMNS, deliveryIdSql, dueInTurnCtes, deliveryOfRow, secretsOfRow, type DeliveryRow, type SecretRow } from '../delivery-rows.js';
import type { DeliveryAttempt, DeliveryOutcome, WebhookDelivery, WebhookSecrets, WebhookStore } from '../webhook-types.js';

/**
 * Queues a finished task's delivery, inside the transaction of its terminal update (G210); a task
 * without a callback URL queues nothing, and a second call for the same task changes nothing.
 */
export class SqliteOutbox {
  private readonly enqueueStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.enqueueStmt = db.prepare(`INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
      SELECT ${deliveryIdSql('id')}, id, owner_key_id, callback_url, 'pending', ?, ? FROM tasks WHERE id = ? AND callback_url IS NOT NULL
      ON CONFLICT DO NOTHING`);
  }

  enqueue(taskId: string, now: number): void {
    this.enqueueStmt.run(now, now, taskId);
  }
}

/** The ids a claim takes (`@now`, `@limit`), in turn across keys (G461, G480). */
export const DUE_SQL = `WITH RECURSIVE ${dueInTurnCtes('sqlite', '@now', '@limit')} SELECT id FROM cand ORDER BY turn, next_attempt_at, id LIMIT @limit`;

/** SQLite webhook secrets and deliveries; claims (in turn across keys, G461) are conditional updates inside one IMMEDIATE transaction. */
export class SqliteWebhookStore implements WebhookStore {
  private readonly secretsStmt: Database.Statement;
  private readonly rotateStmt: Database.Statement;
  private readonly claim: (workerId: string, now: number, leaseUntil: number, limit: number) => DeliveryRow[];
  private readonly keepBodyStmt: Database.Statement;
  private readonly attemptStmt: Database.Statement;
  private readonly listStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.secretsStmt = db.prepare(`UPDATE api_keys SET webhook_secret = COALESCE(webhook_secret, ?) WHERE id = ? RETURNING ${SECRET_COLUMNS}`);
    this.rotateStmt = db.prepare(`UPDATE api_keys SET webhook_secret_previous = webhook_secret, webhook_secret = ?, webhook_secret_rotated_at = ?
      WHERE id = ? RETURNING ${SECRET_COLUMNS}`);
    const due = db.prepare(DUE_SQL).pluck();
    const take = db.prepare(`UPDATE webhook_deliveries SET lease_owner = ?, next_attempt_at = ?
      WHERE id = ? AND status = 'pending' AND next_attempt_at <= ? RETURNING *`);
    const claim = db.transaction((workerId: string, now: number, leaseUntil: number, limit: number) =>
      (due.all({ now, limit }) as string[]).flatMap((id) => {
        const row = take.get(workerId, leaseUntil, id, now) as DeliveryRow | undefined;
        return row ? [row] : [];
      }),
    );
    const anyDue = db.prepare(`SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? LIMIT 1`).pluck();
    // the write lock only when something is due: idle workers poll without taking it
    this.claim = (workerId, now, leaseUntil, limit) => (anyDue.get(now) === undefined ? [] : claim.immediate(workerId, now, leaseUntil, limit));
    this.keepBodyStmt = db
      .prepare(`UPDATE webhook_deliveries SET body = COALESCE(body, ?) WHERE id = ? AND lease_owner = ? AND status = 'pending' RETURNING body`)
      .pluck();
    this.attemptStmt = db.prepare(`UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?)), attempt_count = attempt_count + 1,
      status = ?, next_attempt_at = ?, lease_owner = NULL WHERE id = ? AND lease_owner = ? AND status = 'pending'`);
    this.listStmt = db.prepare('SELECT * FROM webhook_deliveries WHERE task_id = ? ORDER BY created_at, id');
  }

  async secrets(keyId: string, fresh: string): Promise<WebhookSecrets | undefined> {
    const row = this.secretsStmt.get(fresh, keyId) as SecretRow | undefined;
    return row && secretsOfRow(row);
  }

  async rotateSecret(keyId: string, fresh: string, now: number): Promise<WebhookSecrets | undefined> {
    const row = this.rotateStmt.get(fresh, now, keyId) as SecretRow | undefined;
    return row && secretsOfRow(row);
  }

  async claimDue(workerId: string, now: number, leaseUntil: number, limit: number): Promise<WebhookDelivery[]> {
    return this.claim(workerId, now, leaseUntil, limit).map(deliveryOfRow);
  }

  async keepBody(id: string, workerId: string, body: string): Promise<string | undefined> {
    return this.keepBodyStmt.get(body, id, workerId) as string | undefined;
  }

  async recordAttempt(id: string, workerId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome): Promise<boolean> {
    const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
    return this.attemptStmt.run(JSON.stringify(attempt), outcome.status, next, id, workerId).changes === 1;
  }

  async listForTask(taskId: string): Promise<WebhookDelivery[]> {
    return (this.listStmt.all(taskId) as DeliveryRow[]).map(deliveryOfRow);
  }
}
