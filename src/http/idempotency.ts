/**
 * The HTTP side of `Idempotency-Key` (the rules live in tasks/idempotency.ts;
 * G70-G73): routes with `config.idempotent` claim the key before their handler, answer a stored
 * response with `Idempotent-Replayed: true`, and store (or free) the key with their response.
 */
import type { FastifyInstance, onResponseHookHandler, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import type { IdempotencyClaim, IdempotencyService } from '../tasks/idempotency.js';
import { hookList } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A create endpoint: honours `Idempotency-Key`. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** The claimed Idempotency-Key of this request, until its response is stored. */
    idempotency: IdempotencyClaim | undefined;
  }
}

export function registerIdempotency(scope: FastifyInstance, idempotency: IdempotencyService): void {
  scope.decorateRequest('idempotency', undefined);

  const claim: preHandlerAsyncHookHandler = async function claim(request, reply) {
    const idemKey = request.headers['idempotency-key'];
    if (idemKey === undefined) return;
    const start = await idempotency.start(request.apiKey.id, idemKey, request.routeOptions.url ?? '', request.body);
    if (start.run) {
      request.idempotency = start.claim;
      return;
    }
    return reply.code(start.statusCode).header('content-type', 'application/json; charset=utf-8').header('idempotent-replayed', 'true').send(start.payload);
  };

  const keepResponse: onSendHookHandler = function storeResponse(request, reply, payload, done) {
    const claimed = request.idempotency;
    if (!claimed) {
      done(null, payload);
      return;
    }
    request.idempotency = undefined;
    // stored before it is sent: a client that saw the response finds it replayed
    idempotency.finish(claimed, reply.statusCode, typeof payload === 'string' ? payload : undefined).then(
      () => done(null, payload),
      (err: unknown) => done(err as Error),
    );
  };

  const release: onResponseHookHandler = function release(request, _reply, done) {
    // no payload went out (the client went away first): free the key
    if (request.idempotency) {
      idempotency
        .abandon(request.idempotency)
        .catch((err: unknown) => request.log.error({ err }, 'could not free the Idempotency-Key of a request that sent no response'));
    }
    done();
  };

  // Only the create routes get these hooks: the poll path pays nothing for them.
  scope.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [...hookList(route.preHandler), claim];
    route.onSend = [...hookList(route.onSend), keepResponse];
    route.onResponse = [...hookList(route.onResponse), release];
  });
}
