import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { TaskService } from '../tasks/service.js';

export const TaskIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'Task id returned by the create call' }) });

import type { RoutePaths } from './index.js';

/**
 * Every query path: `{base_url}/v1/result/{id}` and `{power_base_url}/v1/result/{id}`. Any of them
 * answers for any task of the caller, shaped by the family that created it (decisions.md #4).
 */
export function registerResultRoutes(app: FastifyInstance, tasks: TaskService, links: ReplyContext, paths: RoutePaths): void {
  const urls = new Set([`${paths.basePrefix}/v1/result/:id`, `${paths.powerPrefix}/v1/result/:id`]);
  for (const url of urls) {
    app.get<{ Params: { id: string } }>(url, {
      schema: { tags: ['tasks'], summary: 'Query a task', params: TaskIdParams },
    }, async (request) => queryReply(tasks.getOwnedTask(request.apiKey, request.params.id), links));
  }
}
