import type { FastifyInstance } from 'fastify';
import { ClipCreateBody, planClipTask } from '../contract/clip.js';
import { clipCreateReply } from '../families/clip.js';
import type { TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { CREATE_ERRORS, responses } from '../contract/responses.js';
import { ClipCreateReply } from '../contract/task-replies.js';

/**
 * Endpoint 4: Form A `POST {api_base_url}/clip/videos`, Form B `POST {base_url}/clip/videos`.
 * Each distinct path is registered once; the form follows `model` on either (D2).
 */
export function registerClipRoutes(app: FastifyInstance, tasks: TaskService, paths: RoutePaths): void {
  const urls = new Set([`${paths.apiPrefix}/clip/videos`, `${paths.basePrefix}/clip/videos`]);
  for (const url of urls) {
    app.post<{ Body: ClipCreateBody }>(
      url,
      {
        config: { idempotent: true },
        schema: {
          tags: ['clip'],
          summary: 'Create a clip video task (Form A or B by model)',
          body: ClipCreateBody,
          response: responses({ 200: ClipCreateReply }, CREATE_ERRORS, { idempotent: true }),
        },
      },
      async (request) => clipCreateReply(await tasks.submitRequest(request, planClipTask)),
    );
  }
}
