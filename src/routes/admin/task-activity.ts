import type { FastifyInstance } from 'fastify';
import { readTaskActivity } from '../../admin/task-activity.js';
import { ADMIN_TAG } from '../../contract/admin-common.js';
import { AdminTaskActivity, TaskActivityQuerystring } from '../../contract/admin-task-activity.js';
import { responses } from '../../contract/responses.js';
import type { AdminStore } from '../../admin/services.js';
import { ADMIN_ERRORS } from './errors.js';

/** `GET /admin/v1/task-activity` (G370). */
export function registerAdminTaskActivityRoute(app: FastifyInstance, admin: Pick<AdminStore, 'taskMinutes'>, now: () => number): void {
  app.get<{ Querystring: TaskActivityQuerystring }>(
    '/admin/v1/task-activity',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary:
          'Tasks per minute by status: submitted, and each status entered (queued again, processing, completed, failed, cancelled), the last hour by default',
        querystring: TaskActivityQuerystring,
        response: responses({ 200: AdminTaskActivity }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => readTaskActivity(admin, request.query, now()),
  );
}
