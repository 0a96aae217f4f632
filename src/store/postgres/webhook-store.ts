import type pg from 'pg';
import { SECRET_COLUMNS, deliveryOfRow, dueInTurnCtes, secretsOfRow, type DeliveryRow, type SecretRow } from '../delivery-rows.js';
import type { DeliveryAttempt, DeliveryOutcome, WebhookDelivery, WebhookSecrets, WebhookStore } from '../webhook-types.js';

/**
 * Due deliveries leased in one statement, in turn across keys (G461, G480; `$1` the worker, `$2`
 * the time, `$3` the lease's end, `$4` how many); `FOR UPDATE SKIP LOCKED`:
 * concurrent workers of any process pass over each other's rows. The `= ANY (ARRAY(...))` tells
 * the planner the candidates are few: it read every due delivery into a hash join otherwise.
 */
export const CLAIM_SQL = `
WITH RECURSIVE ${dueInTurnCtes('postgres', '$2', '$4')}, due AS (
  SELECT d.id FROM webhook_deliveries d JOIN cand t ON t.id = d.id
  WHERE d.id = ANY (ARRAY(SELECT id FROM cand)) AND d.status = 'pending' AND d.next_attempt_at <= $2
  ORDER BY t.turn, t.next_attempt_at, t.id LIMIT $4 FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET lease_owner = $1, next_attempt_at = $3 FROM due WHERE d.id = due.id RETURNING d.*`;

/** PostgreSQL webhook secrets and deliveries (the deliveries are queued by the task store's terminal updates). */
export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  async secrets(keyId: string, fresh: string): Promise<WebhookSecrets | undefined> {
    const { rows } = await this.pool.query<SecretRow>({
      name: 'mg_webhook_secrets',
      text: `UPDATE api_keys SET webhook_secret = COALESCE(webhook_secret, $1) WHERE id = $2 RETURNING ${SECRET_COLUMNS}`,
      values: [fresh, keyId],
    });
    return rows[0] && secretsOfRow(rows[0]);
  }

  async rotateSecret(keyId: string, fresh: string, now: number): Promise<WebhookSecrets | undefined> {
    const { rows } = await this.pool.query<SecretRow>({
      name: 'mg_webhook_rotate',
      text: `UPDATE api_keys SET webhook_secret_previous = webhook_secret, webhook_secret = $1, webhook_secret_rotated_at = $2
        WHERE id = $3 RETURNING ${SECRET_COLUMNS}`,
      values: [fresh, now, keyId],
    });
    return rows[0] && secretsOfRow(rows[0]);
  }

  async claimDue(workerId: string, now: number, leaseUntil: number, limit: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>({ name: 'mg_webhook_claim', text: CLAIM_SQL, values: [workerId, now, leaseUntil, limit] });
    return rows.map(deliveryOfRow).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  async keepBody(id: string, workerId: string, body: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ body: string }>({
      name: 'mg_webhook_keep_body',
      text: `UPDATE webhook_deliveries SET body = COALESCE(body, $1) WHERE id = $2 AND lease_owner = $3 AND status = 'pending' RETURNING body`,
      values: [body, id, workerId],
    });
    return rows[0]?.body;
  }

  async recordAttempt(id: string, workerId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome): Promise<boolean> {
    const { rowCount } = await this.pool.query({
      name: 'mg_webhook_attempt',
      text: `UPDATE webhook_deliveries SET attempts = (attempts::jsonb || jsonb_build_array($1::jsonb))::text, attempt_count = attempt_count + 1,
        status = $2, next_attempt_at = $3, lease_owner = NULL WHERE id = $4 AND lease_owner = $5 AND status = 'pending'`,
      values: [JSON.stringify(attempt), outcome.status, outcome.status === 'pending' ? outcome.nextAttemptAt : null, id, workerId],
    });
    return rowCount === 1;
  }

  async listForTask(taskId: string): Promise<WebhookDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>({
      name: 'mg_webhook_list',
      text: 'SELECT * FROM webhook_deliveries WHERE task_id = $1 ORDER BY created_at, id COLLATE "C"',
      values: [taskId],
    });
    return rows.map(deliveryOfRow);
  }
}
