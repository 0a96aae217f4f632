import type { FastifyInstance } from 'fastify';
import { MotionCreateBody, planMotionTask } from '../contract/motion.js';
import { motionCreateReply, motionQueryReply } from '../families/motion.js';
import type { ReplyContext } from '../families/reply-context.js';
import { registerOptionalJsonObjectParser } from '../http/json-body.js';
import type { TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { TaskIdParams } from './results.js';
import { ACTION_ERRORS, CREATE_ERRORS, responses } from '../contract/responses.js';
import { MotionCreateReply, MotionQueryReply } from '../contract/task-replies.js';

/**
 * Endpoint 8: `POST {power_base_url}/v1/motion/videos`; and the cancel action (D23):
 * `POST {power_base_url}/v1/motion/videos/{id}/cancel`. Querying is endpoint 9 (routes/results.ts).
 */
export function registerMotionRoutes(app: FastifyInstance, tasks: TaskService, paths: RoutePaths, links: ReplyContext): void {
  app.post<{ Body: MotionCreateBody }>(
    `${paths.powerPrefix}/v1/motion/videos`,
    {
      config: { idempotent: true },
      schema: {
        tags: ['motion'],
        summary: 'Create a motion video task',
        body: MotionCreateBody,
        response: responses({ 200: MotionCreateReply }, CREATE_ERRORS, { idempotent: true }),
      },
    },
    async (request) => motionCreateReply(await tasks.submitRequest(request, planMotionTask)),
  );

  void app.register(async (scope) => {
    // The cancel call needs no body; an empty body sent as application/json is accepted too, and a
    // JSON body, when sent, must be an object like every other body (its fields are ignored; G30).
    registerOptionalJsonObjectParser(scope, 'the cancel call needs no body');
    scope.post<{ Params: { id: string } }>(
      `${paths.powerPrefix}/v1/motion/videos/:id/cancel`,
      {
        schema: {
          tags: ['motion'],
          summary: 'Cancel a queued or processing motion task',
          params: TaskIdParams,
          response: responses({ 200: MotionQueryReply }, ACTION_ERRORS),
        },
      },
      async (request) => motionQueryReply(await tasks.cancelOwnedTask(request.apiKey, request.params.id, 'motion'), links),
    );
  });
}
