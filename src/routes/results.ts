import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '../typebox.js';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { LiveRequests } from '../http/live-requests.js';
import type { TaskRecord, TaskService } from '../tasks/service.js';
import type { RoutePaths } from './route-types.js';
import { QUERY_ERRORS, responses } from '../contract/responses.js';
import { TaskQueryReply } from '../contract/task-replies.js';

export const TaskIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'Task id returned by the create call' }) });

/** Long-poll (G74): `?wait=N`, N whole seconds 0-60. */
export const WaitQuery = Type.Object({
  wait: Type.Optional(
    Type.String({ pattern: '^([0-9]|[1-5][0-9]|60)$', description: 'Long-poll: answer as soon as the task changes status, or after this many seconds (0-60)' }),
  ),
});

/**
 * Query replies already serialised, per task record. A record is never changed in place (the store
 * hands out a new one for every change), so a task polled again and again while nothing happens
 * to it is answered with the same text; a changed task is a new record, hence a new reply.
 */
const serialised = new WeakMap<TaskRecord, string>();

function sendQueryReply(reply: FastifyReply, task: TaskRecord, links: ReplyContext): FastifyReply {
  let json = serialised.get(task);
  if (json === undefined) {
    json = JSON.stringify(queryReply(task, links));
    serialised.set(task, json);
  }
  return reply.type('application/json; charset=utf-8').send(json);
}

/** Registers GET query routes at `urls`: each answers for any task of the caller, shaped by its family (D4). */
export function registerQueryPaths(
  app: FastifyInstance,
  urls: Iterable<string>,
  tasks: TaskService,
  links: ReplyContext,
  live: LiveRequests,
  summary = 'Query a task',
): void {
  for (const url of new Set(urls)) {
    app.get<{ Params: { id: string }; Querystring: { wait?: string } }>(
      url,
      {
        schema: { tags: ['tasks'], summary, params: TaskIdParams, querystring: WaitQuery, response: responses({ 200: TaskQueryReply }, QUERY_ERRORS) },
        config: { keyCheckedByRoute: true },
      },
      async (request, reply) => {
        const task = await tasks.getTaskForKeyHash(request.apiKeyHash, request.params.id);
        const wait = request.query.wait;
        if (wait === undefined || wait === '0') return sendQueryReply(reply, task, links);
        const gone = live.track(reply, request.apiKeyHash, 'drain'); // a shutdown answers at once with the task as it is (G343)
        try {
          return sendQueryReply(reply, await tasks.waitForTaskChange(request.apiKeyHash, task, Number(wait) * 1000, gone.signal), links);
        } finally {
          gone.release();
        }
      },
    );
  }
}

/** Endpoints 2, 5, 9, 11: `{base_url}/v1/result/{id}` and `{power_base_url}/v1/result/{id}`. */
export function registerResultRoutes(app: FastifyInstance, tasks: TaskService, links: ReplyContext, paths: RoutePaths, live: LiveRequests): void {
  registerQueryPaths(app, [`${paths.basePrefix}/v1/result/:id`, `${paths.powerPrefix}/v1/result/:id`], tasks, links, live);
}
