/**
 * Request metrics (G223): each answered request counted and timed by its route's pattern (never the
 * URL: ids stay out of labels), method and status; requests that matched no route share the
 * pattern `unmatched`. Keys named in MEDIAGATE_METRICS_KEYS get a `key` label of their own.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayMetrics } from './gateway-metrics.js';

export const UNMATCHED_ROUTE = 'unmatched';

/** The route's pattern as Fastify registered it (`/v1/pic/:id`), or `unmatched`. */
export function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? UNMATCHED_ROUTE;
}

interface Authenticated {
  apiKey?: { id: string } | null;
  apiKeyHash?: string;
}

/**
 * Which allow-listed key made a request. Most routes look the key up (`request.apiKey`); the poll
 * path checks it inside its one query and knows only the key's hash, so the hashes of the
 * allow-listed keys are learned from their authenticated requests (at most one per listed key).
 */
function keyOfRequest(keys: ReadonlySet<string>): (request: Authenticated) => string | undefined {
  const byHash = new Map<string, string>();
  return (request) => {
    const id = request.apiKey?.id;
    const hash = request.apiKeyHash;
    if (id !== undefined) {
      if (hash && keys.has(id) && !byHash.has(hash)) byHash.set(hash, id);
      return id;
    }
    return hash ? byHash.get(hash) : undefined;
  };
}

export function registerRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  const keyOf = metrics.keys.size > 0 ? keyOfRequest(metrics.keys) : () => undefined;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(routePattern(request), request.method, reply.statusCode, keyOf(request as Authenticated), reply.elapsedTime / 1000);
    done();
  });
}
