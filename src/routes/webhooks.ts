import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { unixSeconds } from '../families/reply-context.js';
import type { WebhookSecrets, WebhookStore } from '../store/webhook-types.js';
import type { TaskService } from '../tasks/service.js';
import { newWebhookSecret } from '../webhooks/signing.js';

const SecretReply = Type.Object({
  key: Type.String({ description: 'The key\'s webhook signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks).' }),
});

const Attempt = Type.Object({
  at: Type.Integer({ description: 'When it was sent, Unix seconds' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver\'s HTTP status; null when none came' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (with an excerpt of the answer); null when delivered' }),
  duration_ms: Type.Integer(),
});

const DeliveryList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({
    id: Type.String({ description: 'The `webhook-id` header: one per event, the same on every retry' }),
    url: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Array(Attempt),
    next_attempt_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds of the next attempt; null once delivered or failed' }),
  })),
});

const TaskParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

/**
 * G209, G213: `GET /v1/webhooks/secret` (created on first use), `POST /v1/webhooks/secret/rotate`,
 * `GET /v1/tasks/{id}/deliveries` (the caller's own tasks only: another key's task is a 404).
 */
export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookStore, tasks: TaskService): void {
  const secretReply = (secrets: WebhookSecrets | undefined, keyId: string): Static<typeof SecretReply> => {
    if (!secrets) throw new AppError('internal_error', 'Internal server error', { cause: new Error(`no key ${keyId}`) });
    return { key: secrets.current };
  };
  app.get('/v1/webhooks/secret', {
    schema: { tags: ['webhooks'], summary: 'The calling key\'s webhook signing secret', response: { 200: SecretReply } },
  }, async (request) => secretReply(await webhooks.secrets(request.apiKey.id, newWebhookSecret()), request.apiKey.id));

  app.post('/v1/webhooks/secret/rotate', {
    schema: { tags: ['webhooks'], summary: 'Replace the calling key\'s webhook signing secret (the old one also signs for 24 h)', response: { 200: SecretReply } },
  }, async (request) => secretReply(await webhooks.rotateSecret(request.apiKey.id, newWebhookSecret(), Date.now()), request.apiKey.id));

  app.get<{ Params: Static<typeof TaskParams> }>('/v1/tasks/:id/deliveries', {
    schema: { tags: ['webhooks'], summary: 'The webhook deliveries of a task and their attempts', params: TaskParams, response: { 200: DeliveryList } },
  }, async (request): Promise<Static<typeof DeliveryList>> => {
    const task = await tasks.getOwnedTask(request.apiKey, request.params.id);
    const deliveries = await webhooks.listForTask(task.id);
    return {
      object: 'list',
      data: deliveries.map((d) => ({
        id: d.id, url: d.url, status: d.status,
        attempts: d.attempts.map((a) => ({ at: unixSeconds(a.at), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
        next_attempt_at: d.nextAttemptAt === null ? null : unixSeconds(d.nextAttemptAt),
      })),
    };
  });
}
