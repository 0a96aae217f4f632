import type { FastifyInstance } from 'fastify';
import type { AdminServices } from '../../admin/services.js';
import { registerAuth, type AuthOptions } from '../../auth/plugin.js';
import { AppError } from '../../errors.js';
import { registerBodyBounds } from '../../http/body-bounds.js';
import { registerAdminAccountRoutes } from './accounts.js';
import { registerAdminAuditRoutes } from './audit.js';
import { registerAdminChannelRoutes } from './channels.js';
import { registerAdminKeyRoutes } from './keys.js';
import { registerAdminTaskActivityRoute } from './task-activity.js';
import { registerAdminTaskRoutes } from './tasks.js';
import { registerAdminUsageRoute } from './usage.js';

/**
 * The admin API (`/admin/v1/*`, G300-G311) in a scope of its own: the bearer key is checked as on
 * the public API (401 without one), then its role: a caller key is a 403 `admin_only`. One file per
 * resource; each route calls the admin service layer (src/admin/) and nothing else: keys,
 * accounts, audit and settings (G300-G311); every tenant's tasks, usage and channels (G317-G323); tasks per minute (G370).
 */
export async function registerAdminRoutes(
  app: FastifyInstance,
  keys: Parameters<typeof registerAuth>[1],
  admin: AdminServices,
  auth: AuthOptions,
): Promise<void> {
  await app.register(async (scope) => {
    registerAuth(scope, keys, auth);
    scope.addHook('onRequest', (request, _reply, done) => {
      if (request.apiKey.role === 'admin') done();
      else
        done(
          new AppError(
            'admin_only',
            'This endpoint needs an admin key (mediagate keys create --role admin, or MEDIAGATE_BOOTSTRAP_ADMIN_KEY); caller keys use the public API',
          ),
        );
    });
    registerBodyBounds(scope);
    registerAdminKeyRoutes(scope, admin.keys);
    registerAdminAccountRoutes(scope, admin.accounts);
    registerAdminAuditRoutes(scope, admin);
    if (admin.tasks) registerAdminTaskRoutes(scope, admin.tasks);
    registerAdminUsageRoute(scope, admin.store, admin.now);
    registerAdminTaskActivityRoute(scope, admin.store, admin.now);
    if (admin.channels) registerAdminChannelRoutes(scope, admin.channels);
  });
}
