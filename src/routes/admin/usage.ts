import type { FastifyInstance } from 'fastify';
import { readUsage } from '../../admin/usage-admin.js';
import { ADMIN_TAG } from '../../contract/admin-common.js';
import { AdminUsage, UsageQuerystring } from '../../contract/admin-usage.js';
import { responses } from '../../contract/responses.js';
import type { AdminStore } from '../../admin/services.js';
import { ADMIN_ERRORS } from './errors.js';

/** `GET /admin/v1/usage` (G321). */
export function registerAdminUsageRoute(app: FastifyInstance, admin: Pick<AdminStore, 'usage'>, now: () => number): void {
  app.get<{ Querystring: UsageQuerystring }>(
    '/admin/v1/usage',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Tasks submitted, completed, failed and cancelled, video seconds, images, chat tokens and credits captured, per bucket and group',
        querystring: UsageQuerystring,
        response: responses({ 200: AdminUsage }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => readUsage(admin, request.query, now()),
  );
}
