import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { ResourceMonitor } from '../resources.js';
import type { Store } from '../store/types.js';

/**
 * `/healthz`: the process answers. `/readyz`: the store answers and the gateway has what it needs
 * to run tasks (disk, descriptors: G84); a 503 names what is missing. Neither needs a key.
 */
export function registerHealthRoutes(app: FastifyInstance, store: Store, resources: ResourceMonitor): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      store.ping();
    } catch (err) {
      throw new AppError('service_unavailable', 'The task store is not reachable', { cause: err });
    }
    const state = resources.check();
    if (!state.ok) throw new AppError('service_unavailable', `Not ready: ${state.problems.join('; ')}`);
    return { status: 'ready' };
  });
}
