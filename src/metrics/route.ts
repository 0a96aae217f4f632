/**
 * `GET /metrics` (G221, G222): registered only when `MEDIAGATE_METRICS_TOKEN` is set (absent: the
 * route does not exist, 404). The token is compared in constant time (digests of equal length),
 * never logged (the access log names the route, not headers), and `/metrics` sits outside the
 * API-key scope: no key, no per-key rate limit.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '../typebox.js';
import type { FastifyInstance } from 'fastify';
import { responses } from '../contract/responses.js';
import { bearerToken } from '../auth/plugin.js';
import { AppError } from '../errors.js';
import type { GatewayMetrics } from './gateway-metrics.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, token: string): void {
  const expected = digest(token);
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operators'],
        summary: 'Prometheus metrics (with Authorization: Bearer <MEDIAGATE_METRICS_TOKEN>)',
        response: responses(
          {
            200: { description: 'The metrics, Prometheus text format 0.0.4', content: { 'text/plain': { schema: Type.String({ title: 'PrometheusText' }) } } },
          },
          [401, 500],
        ),
      },
    },
    async (request, reply) => {
      const given = bearerToken(request.headers.authorization);
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        throw new AppError('invalid_metrics_token', 'GET /metrics needs Authorization: Bearer <MEDIAGATE_METRICS_TOKEN>', {
          headers: { 'www-authenticate': 'Bearer' },
        });
      }
      const text = await metrics.text();
      return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(text);
    },
  );
}
