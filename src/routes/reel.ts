import type { FastifyInstance } from 'fastify';
import { planReelTask, ReelCreateBody } from '../contract/reel.js';
import type { ReplyContext } from '../families/reply-context.js';
import type { LiveRequests } from '../http/live-requests.js';
import { reelCreateReply } from '../families/reel.js';
import type { TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { registerQueryPaths } from './results.js';
import { CREATE_ERRORS, responses } from '../contract/responses.js';
import { ReelCreateReply } from '../contract/task-replies.js';

/**
 * Endpoint 6: `POST {api_base_url}/reel/videos`, `POST {base_url}/reel/videos` and the overview
 * `POST {base_url}/v1/reel/videos` (D3); the form follows `model` on every path.
 * Also the query paths of endpoint 7 (`registerReelQueryRoutes`).
 */
export function registerReelRoutes(app: FastifyInstance, tasks: TaskService, paths: RoutePaths, links: ReplyContext, live: LiveRequests): void {
  const urls = new Set([`${paths.apiPrefix}/reel/videos`, `${paths.basePrefix}/reel/videos`, `${paths.basePrefix}/v1/reel/videos`]);
  for (const url of urls) {
    app.post<{ Body: ReelCreateBody }>(
      url,
      {
        config: { idempotent: true },
        schema: {
          tags: ['reel'],
          summary: 'Create a reel video task (Form A or B by model)',
          body: ReelCreateBody,
          response: responses({ 200: ReelCreateReply }, CREATE_ERRORS, { idempotent: true }),
        },
      },
      async (request) => reelCreateReply(await tasks.submitRequest(request, planReelTask)),
    );
  }
  registerReelQueryRoutes(app, tasks, links, paths, live);
}

/**
 * Endpoint 7: `GET {api_base_url}/v1/videos/{id}` and the overview `GET {base_url}/v1/reel/videos/{id}`.
 * Like every query path they answer for any task of the caller, shaped by its family (D4).
 */
export function registerReelQueryRoutes(app: FastifyInstance, tasks: TaskService, links: ReplyContext, paths: RoutePaths, live: LiveRequests): void {
  registerQueryPaths(
    app,
    [`${paths.apiPrefix}/v1/videos/:id`, `${paths.basePrefix}/v1/reel/videos/:id`],
    tasks,
    links,
    live,
    'Query a task (reel query paths)',
  );
}
