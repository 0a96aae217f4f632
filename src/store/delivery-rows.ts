/** The `webhook_deliveries` table's row shape and its mapping to records, shared by the SQLite and PostgreSQL stores. */
import type { DeliveryStatus, WebhookDelivery, WebhookSecrets } from './webhook-types.js';

export interface DeliveryRow {
  id: string;
  task_id: string;
  owner_key_id: string;
  url: string;
  status: DeliveryStatus;
  body: string | null;
  attempts: string;
  attempt_count: number;
  next_attempt_at: number | null;
  lease_owner: string | null;
  created_at: number;
}

export const deliveryOfRow = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  taskId: r.task_id,
  ownerKeyId: r.owner_key_id,
  url: r.url,
  status: r.status,
  body: r.body,
  attempts: JSON.parse(r.attempts),
  nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  createdAt: Number(r.created_at),
});

/**
 * The due deliveries (`now`: the placeholder of the time), each with its turn within its key's: 1
 * for the key's earliest due, 2 for its next, ... Claims take them by turn, then by time, so each
 * key's earliest goes before any key's second: one key's backlog of slow receivers cannot hold
 * every attempt slot while other keys' deliveries wait behind it (G461).
 */
export const dueInTurnSql = (now: string): string => `SELECT id, next_attempt_at,
  ROW_NUMBER() OVER (PARTITION BY owner_key_id ORDER BY next_attempt_at, id) AS turn
  FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}`;

/** The webhook-id of a task's terminal event: one event per task, so the task's id names it (G210). */
export const deliveryIdSql = (taskId: string): string => `'msg_' || ${taskId}`;

export interface SecretRow {
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_rotated_at: number | null;
}

export const secretsOfRow = (r: SecretRow): WebhookSecrets => ({
  current: r.webhook_secret,
  previous: r.webhook_secret_previous,
  rotatedAt: r.webhook_secret_rotated_at === null ? null : Number(r.webhook_secret_rotated_at),
});

export const SECRET_COLUMNS = 'webhook_secret, webhook_secret_previous, webhook_secret_rotated_at';
