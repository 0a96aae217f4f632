import type { FastifyInstance } from 'fastify';
import { planVideosTask, VideosCreateBody } from '../contract/videos.js';
import { videosCreateReply } from '../families/videos.js';
import type { TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { CREATE_ERRORS, responses } from '../contract/responses.js';
import { VideosCreateReply } from '../contract/task-replies.js';

/**
 * Endpoint 10: `POST {base_url}/v1/videos/videos`. Every error of this route, schema errors
 * included, is rendered as `{code, msg, data: null}` (D9). Querying is endpoint 11.
 */
export function registerVideosRoutes(app: FastifyInstance, tasks: TaskService, paths: RoutePaths): void {
  app.post<{ Body: VideosCreateBody }>(
    `${paths.basePrefix}/v1/videos/videos`,
    {
      config: { errorStyle: 'videos-create', idempotent: true },
      schema: {
        tags: ['videos'],
        summary: 'Create a videos task',
        body: VideosCreateBody,
        response: responses({ 200: VideosCreateReply }, CREATE_ERRORS, { style: 'videos-create', idempotent: true }),
      },
    },
    async (request) => videosCreateReply(await tasks.submitRequest(request, planVideosTask)),
  );
}
