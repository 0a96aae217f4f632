import { Type, type Static } from '../typebox.js';
import { Nullable, TaskQueryReply } from './task-replies.js';
import { StringEnum } from './schema-helpers.js';

/**
 * Replies of the endpoints issue 17 adds around tasks (the task list, the status stream, webhook
 * deliveries and signing secrets): one schema source for their types and the OpenAPI document.
 */

const closed = { additionalProperties: false } as const;

/** `GET /v1/tasks` (G216): a page of the caller's tasks, each in its family's query shape. */
export const TaskListReply = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(TaskQueryReply, { description: "The tasks, newest first, each exactly as its family's query endpoint answers it" }),
    has_more: Type.Boolean({ description: 'Whether another page follows' }),
    next_cursor: Nullable(Type.String({ description: 'Send as `cursor` (with the same filters) for the next page; null on the last page' })),
  },
  { ...closed, title: 'TaskList', description: "A page of the calling key's tasks" },
);
export type TaskListReply = Static<typeof TaskListReply>;

/** `GET /v1/tasks/{id}/events` (G219). */
export const TaskEventStream = Type.String({
  title: 'TaskEventStream',
  description:
    "Server-sent events: `id: <n>` and `data: <the task in its family's query shape>` at once and at each status or progress change, the last one the terminal state's, followed by a block `id: final` without data (a reconnect sending it back as `Last-Event-ID` is answered 204); `: ping` comments while quiet; an `event: error` with the standard error body when the stream ends early (revoked key, task deleted, shutdown).",
});

/** `GET /v1/webhooks/secret`, `POST /v1/webhooks/secret/rotate` (G209). */
export const WebhookSecretReply = Type.Object(
  {
    key: Type.String({ description: "The key's webhook signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks)." }),
  },
  { ...closed, title: 'WebhookSecret', description: "The calling key's webhook signing secret" },
);
export type WebhookSecretReply = Static<typeof WebhookSecretReply>;

const DeliveryAttempt = Type.Object(
  {
    at: Type.Integer({ description: 'When it was sent, Unix seconds' }),
    status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when none came" })),
    error: Nullable(Type.String({ description: 'Why it failed (with an excerpt of the answer); null when delivered' })),
    duration_ms: Type.Integer(),
  },
  closed,
);

/** `GET /v1/tasks/{id}/deliveries` (G213). */
export const DeliveryListReply = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'The `webhook-id` header: one per event, the same on every retry' }),
          url: Type.String(),
          status: StringEnum(['pending', 'delivered', 'failed']),
          attempts: Type.Array(DeliveryAttempt),
          next_attempt_at: Nullable(Type.Integer({ description: 'Unix seconds of the next attempt; null once delivered or failed' })),
        },
        closed,
      ),
    ),
  },
  { ...closed, title: 'WebhookDeliveries', description: 'The webhook deliveries of a task and their attempts' },
);
export type DeliveryListReply = Static<typeof DeliveryListReply>;
