import type { FastifyInstance } from 'fastify';
import { PicCreateBody, planPicTask } from '../contract/pic.js';
import { picCreateReply } from '../families/pic.js';
import type { TaskService } from '../tasks/service.js';
import { CREATE_ERRORS, responses } from '../contract/responses.js';
import { PicCreateReply } from '../contract/task-replies.js';

/** Endpoint 1: `POST {base_url}/v1/pic/images`. */
export function registerPicRoutes(app: FastifyInstance, tasks: TaskService): void {
  app.post<{ Body: PicCreateBody }>(
    '/v1/pic/images',
    {
      config: { idempotent: true },
      schema: {
        tags: ['pic'],
        summary: 'Create an image task',
        body: PicCreateBody,
        response: responses({ 200: PicCreateReply }, CREATE_ERRORS, { idempotent: true }),
      },
    },
    async (request) => picCreateReply(await tasks.submitRequest(request, planPicTask)),
  );
}
