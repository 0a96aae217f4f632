import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../admin/audit-log.js';
import type { AdminServices } from '../../admin/services.js';
import { ADMIN_TAG } from '../../contract/admin-common.js';
import { AdminAuditLog, AdminSettings, AuditQuerystring } from '../../contract/admin-audit.js';
import { responses } from '../../contract/responses.js';
import { ADMIN_ERRORS } from './errors.js';

/** `GET /admin/v1/audit` (G302) and `GET /admin/v1/settings` (G311). */
export function registerAdminAuditRoutes(app: FastifyInstance, admin: Pick<AdminServices, 'audit' | 'settings'>): void {
  app.get<{ Querystring: AuditQuerystring }>(
    '/admin/v1/audit',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'The audit log: every change through the admin API and the CLI, newest first',
        querystring: AuditQuerystring,
        response: responses({ 200: AdminAuditLog }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => listAudit(admin.audit, request.query),
  );

  app.get(
    '/admin/v1/settings',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'The effective configuration of this process, every secret redacted',
        response: responses({ 200: AdminSettings }, ADMIN_ERRORS),
      },
    },
    async (): Promise<AdminSettings> => ({ object: 'settings', ...admin.settings() }),
  );
}
