import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/**
 * The access log: Fastify's two lines per request ("incoming request", "request completed") become
 * one, written when the response is done: method, route template (never the URL: signed download
 * links carry their signature in the query), status, milliseconds and the request id (the logger's
 * `reqId`). No headers, so no keys.
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, route: request.routeOptions.url ?? null, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) reply.log.error({ ...line, err: error }, 'request');
    else reply.log.info(line, 'request');
  }
}
