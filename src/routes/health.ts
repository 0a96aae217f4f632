import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { Store } from '../store/types.js';

/** `/healthz`: the process answers. `/readyz`: the store answers too. Neither needs a key. */
export function registerHealthRoutes(app: FastifyInstance, store: Store): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      store.ping();
    } catch (err) {
      throw new AppError('service_unavailable', 'The task store is not reachable', { cause: err });
    }
    return { status: 'ready' };
  });
}
