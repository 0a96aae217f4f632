import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { TaskService } from '../tasks/service.js';

export const TaskIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'Task id returned by the create call' }) });

import type { RoutePaths } from './index.js';

/** Registers GET query routes at `urls`: each answers for any task of the caller, shaped by its family (decisions.md #4). */
export function registerQueryPaths(app: FastifyInstance, urls: Iterable<string>, tasks: TaskService, links: ReplyContext, summary = 'Query a task'): void {
  for (const url of new Set(urls)) {
    app.get<{ Params: { id: string } }>(url, {
      schema: { tags: ['tasks'], summary, params: TaskIdParams },
      config: { keyCheckedByRoute: true },
    }, async (request) => queryReply(tasks.getTaskForKeyHash(request.apiKeyHash, request.params.id), links));
  }
}

/** Endpoints 2, 5, 9, 11: `{base_url}/v1/result/{id}` and `{power_base_url}/v1/result/{id}`. */
export function registerResultRoutes(app: FastifyInstance, tasks: TaskService, links: ReplyContext, paths: RoutePaths): void {
  registerQueryPaths(app, [`${paths.basePrefix}/v1/result/:id`, `${paths.powerPrefix}/v1/result/:id`], tasks, links);
}
