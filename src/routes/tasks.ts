import { Type, type Static } from '../typebox.js';
import type { FastifyInstance } from 'fastify';
import { KEYED_ERRORS, responses } from '../contract/responses.js';
import { TaskListReply } from '../contract/task-extras.js';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { TaskService } from '../tasks/service.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, encodeCursor, taskListQuery } from '../tasks/task-list.js';

const TaskListQuerystring = Type.Object(
  {
    status: Type.Optional(
      Type.String({ maxLength: 200, description: 'Only tasks in these statuses: a comma-separated list of queued, processing, completed, failed, cancelled' }),
    ),
    family: Type.Optional(
      Type.String({ maxLength: 200, description: 'Only tasks of these families: a comma-separated list of pic, clip, reel, motion, videos, model-center' }),
    ),
    model: Type.Optional(Type.String({ maxLength: 128, description: 'Only tasks of this model (exact)' })),
    created_after: Type.Optional(
      Type.String({ maxLength: 64, description: 'Only tasks created after this time: Unix seconds, or an ISO-8601 date-time with a time zone' }),
    ),
    limit: Type.Optional(Type.String({ maxLength: 8, description: `Items per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT})` })),
    cursor: Type.Optional(Type.String({ maxLength: 400, description: 'next_cursor of the previous page (with the same filters)' })),
  },
  { additionalProperties: false },
);

/**
 * `GET /v1/tasks` (G216-G218): the calling key's tasks, newest first, each in its family's query
 * shape, in pages chained by an opaque cursor (keyset pagination: stable under inserts).
 */
export function registerTaskListRoute(app: FastifyInstance, tasks: TaskService, links: ReplyContext): void {
  app.get<{ Querystring: Static<typeof TaskListQuerystring> }>(
    '/v1/tasks',
    {
      schema: {
        tags: ['tasks'],
        summary: "The calling key's tasks, newest first (cursor pagination)",
        querystring: TaskListQuerystring,
        response: responses({ 200: TaskListReply }, [400, ...KEYED_ERRORS]),
      },
    },
    async (request): Promise<TaskListReply> => {
      const { query, limit, digest } = taskListQuery(request.apiKey.id, request.query);
      const rows = await tasks.list(query);
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const last = page[page.length - 1];
      return {
        object: 'list',
        data: page.map((task) => queryReply(task, links)),
        has_more: hasMore,
        next_cursor: hasMore && last ? encodeCursor(last.createdAt, last.id, digest) : null,
      };
    },
  );
}
