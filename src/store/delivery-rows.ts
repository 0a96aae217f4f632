/** The `webhook_deliveries` table's row shape and its mapping to records, shared by the SQLite and PostgreSQL stores. */
import type { Dialect } from './key-rows.js';
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
 * When at most this many deliveries are due, a claim reads them all (by time, from the due index)
 * and ranks them; with more, it reads by key ({@link dueInTurnCtes}, G480).
 */
export const RANK_ALL_DUE_UP_TO = 256;

/**
 * The due deliveries a claim of up to `limit` may take, each with its turn within its key's: 1 for
 * the key's earliest due, 2 for its next, ... (`now` and `limit`: the placeholders of the time and
 * the claim's size; common table expressions for a `WITH RECURSIVE`, ending with `cand (id,
 * next_attempt_at, turn)`). Claims take them by turn, then by time, so each key's earliest goes
 * before any key's second: one key's backlog of slow receivers cannot hold every attempt slot while
 * other keys' deliveries wait behind it (G461).
 *
 * Read without sorting every due delivery (G480), two ways (`rankAllUpTo`: tests take the second
 * with fewer due):
 * - `early` reads at most {@link RANK_ALL_DUE_UP_TO} + 1 due deliveries from the due index. When
 *   they are all that is due (`few`), `cand` is every one of them, ranked: the common case, and
 *   nothing else is read (nothing due: nothing at all).
 * - Otherwise (a backlog), `keys` walks the keys with pending deliveries, one seek each in
 *   `webhook_deliveries_key_due`; `firsts` keeps the `limit` keys whose earliest due delivery is
 *   earliest (the only keys a claim can reach: with `limit` of them or more, the claim is their
 *   first turn); `cand` is up to `limit` of each one's earliest due deliveries, at most `limit` x
 *   `limit` rows. The cost is then one seek per key with a pending delivery.
 * SQLite has no `LATERAL` and plans the correlated subqueries below as seeks; PostgreSQL turns the
 * same `IN` into a join over every delivery, so it gets `LATERAL`, and a row comparison that only
 * the key index can serve (its planner walked the due index by time otherwise, filtering by key).
 */
export function dueInTurnCtes(dialect: Dialect, now: string, limit: string, rankAllUpTo = RANK_ALL_DUE_UP_TO): string {
  const head = `early (id, owner_key_id, next_attempt_at) AS (
  SELECT id, owner_key_id, next_attempt_at FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}
  ORDER BY next_attempt_at LIMIT ${rankAllUpTo + 1}
), few (yes) AS (
  SELECT COUNT(*) <= ${rankAllUpTo} FROM early
), keys (k) AS (
  SELECT (SELECT MIN(owner_key_id) FROM webhook_deliveries WHERE status = 'pending') WHERE NOT (SELECT yes FROM few)
  UNION ALL
  SELECT (SELECT MIN(owner_key_id) FROM webhook_deliveries WHERE status = 'pending' AND owner_key_id > keys.k) FROM keys WHERE keys.k IS NOT NULL
)`;
  const turn = (t: string): string => `ROW_NUMBER() OVER (PARTITION BY ${t}.owner_key_id ORDER BY ${t}.next_attempt_at, ${t}.id)`;
  const ranked = (materialized: string, wide: string): string => `, cand (id, next_attempt_at, turn) AS ${materialized}(
  SELECT e.id, e.next_attempt_at, ${turn('e')} FROM early e WHERE (SELECT yes FROM few)
  UNION ALL
  ${wide}
)`;
  if (dialect === 'sqlite')
    return `${head}, firsts (k) AS (
  SELECT f.owner_key_id FROM keys JOIN webhook_deliveries f ON f.id = (SELECT x.id FROM webhook_deliveries x
    WHERE x.status = 'pending' AND x.owner_key_id = keys.k AND x.next_attempt_at <= ${now} ORDER BY x.next_attempt_at, x.id LIMIT 1)
  ORDER BY f.next_attempt_at, f.id LIMIT ${limit}
)${ranked(
      '',
      `SELECT c.id, c.next_attempt_at, ${turn('c')} FROM firsts JOIN webhook_deliveries c ON c.id IN (SELECT y.id FROM webhook_deliveries y
    WHERE y.status = 'pending' AND y.owner_key_id = firsts.k AND y.next_attempt_at <= ${now} ORDER BY y.next_attempt_at, y.id LIMIT ${limit})`,
    )}`;
  const dueOf = (t: string, k: string): string =>
    `${t}.status = 'pending' AND ${t}.owner_key_id = ${k} AND (${t}.owner_key_id, ${t}.next_attempt_at) <= (${k}, ${now})
    ORDER BY ${t}.owner_key_id, ${t}.next_attempt_at, ${t}.id`;
  return `${head}, firsts (k) AS (
  SELECT f.owner_key_id FROM keys CROSS JOIN LATERAL (SELECT x.owner_key_id, x.next_attempt_at, x.id FROM webhook_deliveries x
    WHERE ${dueOf('x', 'keys.k')} LIMIT 1) f
  ORDER BY f.next_attempt_at, f.id LIMIT ${limit}
)${ranked(
    'MATERIALIZED ',
    `SELECT c.id, c.next_attempt_at, ${turn('c')} FROM firsts CROSS JOIN LATERAL (SELECT y.id, y.owner_key_id, y.next_attempt_at FROM webhook_deliveries y
    WHERE ${dueOf('y', 'firsts.k')} LIMIT ${limit}) c`,
  )}`;
}

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
