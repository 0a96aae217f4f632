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
