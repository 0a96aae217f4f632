/**
 * The store contract of caller webhooks (G208-G215): the signing secrets kept in each key's row and
 * the outbox of deliveries, one per finished task that had a callback URL, written by the task's
 * terminal transition itself (`TaskStore.updateIf` with a settlement) and deleted with the task.
 */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One POST of a delivery. */
export interface DeliveryAttempt {
  /** Unix ms when it was sent. */
  at: number;
  /** The receiver's HTTP status, or null when none came (refused address, network, timeout). */
  statusCode: number | null;
  /** Why it failed (a short text, with an excerpt of the receiver's answer), or null when delivered. */
  error: string | null;
  durationMs: number;
}

export interface WebhookDelivery {
  /** The `webhook-id`: one per event, the same across retries. */
  id: string;
  taskId: string;
  ownerKeyId: string;
  url: string;
  status: DeliveryStatus;
  /** The exact body, rendered at the first attempt and sent again as is; null before it. */
  body: string | null;
  attempts: DeliveryAttempt[];
  /** Unix ms of the next attempt (while one is under way: when it may be taken over); null once finished. */
  nextAttemptAt: number | null;
  createdAt: number;
}

/** A key's signing secrets: `whsec_...`; `previous` still signs for a grace period after a rotation. */
export interface WebhookSecrets {
  current: string;
  previous: string | null;
  /** Unix ms of the last rotation, or null. */
  rotatedAt: number | null;
}

/** What an attempt leaves behind: still pending (with the time of the next) or finished. */
export type DeliveryOutcome = { status: 'pending'; nextAttemptAt: number } | { status: 'delivered' | 'failed' };

export interface WebhookStore {
  /** The key's secrets, `fresh` stored first when it has none (created lazily); undefined when no key has this id. */
  secrets(keyId: string, fresh: string): Promise<WebhookSecrets | undefined>;
  /** Makes `fresh` the key's secret, keeping the one it replaces as `previous`; undefined when no key has this id. */
  rotateSecret(keyId: string, fresh: string, now: number): Promise<WebhookSecrets | undefined>;
  /**
   * Leases up to `limit` pending deliveries due at `now` to `workerId` until `leaseUntil` (their
   * `nextAttemptAt` becomes it: should the worker die, they are due again then), the earliest first.
   * Concurrent claims (any process) never take the same delivery.
   */
  claimDue(workerId: string, now: number, leaseUntil: number, limit: number): Promise<WebhookDelivery[]>;
  /** Stores the body unless one is stored already; returns the stored one (undefined when `workerId` lost the lease). */
  keepBody(id: string, workerId: string, body: string): Promise<string | undefined>;
  /** Appends an attempt and its outcome while `workerId` holds the lease; false when it lost it. */
  recordAttempt(id: string, workerId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome): Promise<boolean>;
  /** A task's deliveries (at most one today), oldest first. */
  listForTask(taskId: string): Promise<WebhookDelivery[]>;
}
