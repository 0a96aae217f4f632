import type { FastifyInstance } from 'fastify';
import { ModelCenterCreateBody, planModelCenterTask, resolveModelCenterModel } from '../contract/model-center.js';
import { modelCenterCreateReply } from '../families/model-center.js';
import type { ReplyContext } from '../families/reply-context.js';
import type { LiveRequests } from '../http/live-requests.js';
import type { TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { registerQueryPaths } from './results.js';
import { CREATE_ERRORS, responses } from '../contract/responses.js';
import { ModelCenterReply } from '../contract/task-replies.js';

/**
 * Endpoints 12 and 13: `POST {base_url}/v2/model-center/tasks` and
 * `GET {base_url}/v2/model-center/tasks/{id}`. The query answers for any task of the caller,
 * shaped by its family (D4). `model` is resolved before the body schema runs, so a
 * display name is reported as such (D17) whatever else the body holds.
 */
export function registerModelCenterRoutes(app: FastifyInstance, tasks: TaskService, paths: RoutePaths, links: ReplyContext, live: LiveRequests): void {
  const base = `${paths.basePrefix}/v2/model-center/tasks`;
  app.post<{ Body: ModelCenterCreateBody }>(
    base,
    {
      config: { idempotent: true },
      schema: {
        tags: ['model-center'],
        summary: 'Create a Model Center task',
        body: ModelCenterCreateBody,
        response: responses({ 200: ModelCenterReply }, CREATE_ERRORS, { idempotent: true }),
      },
      preValidation: async (request) => {
        const body = request.body as { model?: unknown } | null;
        if (body !== null && typeof body === 'object' && typeof body.model === 'string') resolveModelCenterModel(body.model);
      },
    },
    async (request) => modelCenterCreateReply(await tasks.submitRequest(request, planModelCenterTask)),
  );

  registerQueryPaths(app, [`${base}/:id`], tasks, links, live, 'Query a Model Center task');
}
