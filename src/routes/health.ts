import type { FastifyInstance } from 'fastify';
import { within } from '../deadline.js';
import { AppError } from '../errors.js';
import type { BlobStores } from '../media/blob-stores.js';
import type { ResourceMonitor } from '../resources.js';
import { HealthReply, ReadyReply } from '../contract/gateway-replies.js';
import { responses } from '../contract/responses.js';

/**
 * `/healthz`: the process answers. `/readyz`: the store answers, the result storage answers (the
 * data directory, or a HeadBucket of the bucket at most every 5 s: G174) and the gateway has what it
 * needs to run tasks (disk, descriptors: G84); a 503 names what is missing, but never a host, port,
 * bucket or path (G262: neither needs a key; the log has the details).
 * A store that does not answer its ping within {@link STORE_PING_MS} (tests give a shorter bound:
 * G277) is unreachable: a database host that drops packets makes `/readyz` a 503 at once, not a
 * wait for the system's TCP timeout.
 */
export const STORE_PING_MS = 3_000;

export function registerHealthRoutes(
  app: FastifyInstance,
  store: { ping(): Promise<void> },
  resources: ResourceMonitor,
  storage: Pick<BlobStores, 'problem'>,
  pingMs = STORE_PING_MS,
): void {
  app.get(
    '/healthz',
    {
      schema: { tags: ['health'], summary: 'The process answers', security: [], response: responses({ 200: HealthReply }, [503]) },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'Ready to take tasks: the store, the result storage, disk and descriptors (a 503 names what is missing)',
        security: [],
        response: responses({ 200: ReadyReply }, [500, 503]),
      },
    },
    async (request) => {
      try {
        await within(store.ping(), pingMs, () => new Error(`no answer within ${pingMs / 1000} s`));
      } catch (err) {
        // the cause (which may name the database host) goes to the log only (G262)
        request.log.warn({ err }, 'the database does not answer (/readyz answers 503)');
        throw new AppError('service_unavailable', 'The task store is not reachable', { cause: err });
      }
      const state = resources.check();
      const storageProblem = await storage.problem();
      const problems = [...(storageProblem ? [storageProblem] : []), ...state.problems];
      if (problems.length > 0) throw new AppError('service_unavailable', `Not ready: ${problems.join('; ')}`);
      return { status: 'ready' as const };
    },
  );
}
