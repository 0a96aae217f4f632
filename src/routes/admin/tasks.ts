import type { FastifyInstance } from 'fastify';
import type { TaskAdmin } from '../../admin/task-admin.js';
import { ADMIN_TAG, IdParams } from '../../contract/admin-common.js';
import { AdminTaskDetail, AdminTaskList, TaskListAdminQuerystring } from '../../contract/admin-tasks.js';
import { responses } from '../../contract/responses.js';
import { ADMIN_ERRORS } from './errors.js';
import { actorOf } from './keys.js';

type IdRequest = { Params: { id: string } };

/** `/admin/v1/tasks` (G317-G320): every tenant's tasks, one with its operator's details, the operator's cancel. */
export function registerAdminTaskRoutes(app: FastifyInstance, tasks: TaskAdmin): void {
  const params = IdParams('task');
  app.get<{ Querystring: TaskListAdminQuerystring }>(
    '/admin/v1/tasks',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: "Every tenant's tasks, newest first (filters: key_id, account_id, family, model, status, provider, created_after, created_before)",
        querystring: TaskListAdminQuerystring,
        response: responses({ 200: AdminTaskList }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => tasks.list(request.query),
  );

  app.get<IdRequest>(
    '/admin/v1/tasks/:id',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: "A task: its caller's view, key and account, the request as accepted, attempts, upstream, hold, webhooks and timeline",
        params,
        response: responses({ 200: AdminTaskDetail }, [404, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => tasks.get(request.params.id),
  );

  app.post<IdRequest>(
    '/admin/v1/tasks/:id/cancel',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Cancel a queued task, or a processing one whose provider can stop it (others: 409)',
        params,
        response: responses({ 200: AdminTaskDetail }, [404, 409, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => tasks.cancel(request.params.id, actorOf(request)),
  );
}
