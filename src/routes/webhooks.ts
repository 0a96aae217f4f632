import type { Static } from '../typebox.js';
import type { FastifyInstance } from 'fastify';
import { KEYED_ERRORS, QUERY_ERRORS, responses } from '../contract/responses.js';
import { DeliveryListReply, WebhookSecretReply } from '../contract/task-extras.js';
import { unixSeconds } from '../families/reply-context.js';
import type { TaskService } from '../tasks/service.js';
import { TaskIdParams } from './results.js';
import type { WebhookKeys } from '../webhooks/webhook-keys.js';

/**
 * G209, G213: `GET /v1/webhooks/secret` (created on first use), `POST /v1/webhooks/secret/rotate`,
 * `GET /v1/tasks/{id}/deliveries` (the caller's own tasks only: another key's task is a 404).
 */
export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookKeys, tasks: TaskService): void {
  app.get(
    '/v1/webhooks/secret',
    {
      schema: { tags: ['webhooks'], summary: "The calling key's webhook signing secret", response: responses({ 200: WebhookSecretReply }, KEYED_ERRORS) },
    },
    async (request): Promise<WebhookSecretReply> => ({ key: await webhooks.currentSecret(request.apiKey.id) }),
  );

  app.post(
    '/v1/webhooks/secret/rotate',
    {
      schema: {
        tags: ['webhooks'],
        summary: "Replace the calling key's webhook signing secret (the old one also signs for 24 h)",
        response: responses({ 200: WebhookSecretReply }, KEYED_ERRORS),
      },
    },
    async (request): Promise<WebhookSecretReply> => ({ key: await webhooks.rotateSecret(request.apiKey.id) }),
  );

  app.get<{ Params: Static<typeof TaskIdParams> }>(
    '/v1/tasks/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'The webhook deliveries of a task and their attempts',
        params: TaskIdParams,
        response: responses({ 200: DeliveryListReply }, QUERY_ERRORS),
      },
    },
    async (request): Promise<DeliveryListReply> => {
      const task = await tasks.getOwnedTask(request.apiKey, request.params.id);
      const deliveries = await webhooks.deliveriesOf(task.id);
      return {
        object: 'list',
        data: deliveries.map((d) => ({
          id: d.id,
          url: d.url,
          status: d.status,
          attempts: d.attempts.map((a) => ({ at: unixSeconds(a.at), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
          next_attempt_at: d.nextAttemptAt === null ? null : unixSeconds(d.nextAttemptAt),
        })),
      };
    },
  );
}
