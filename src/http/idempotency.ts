/**
 * `Idempotency-Key` on the create endpoints (routes with `config.idempotent`): the same key with
 * the same body within 24 h answers the first response again (same task id, no new task, no new
 * charge) with `Idempotent-Replayed: true`; the same key with another body is a 409; keys are
 * scoped to the API key. Only successful responses are kept: after an error the key can be used
 * again. Decisions: docs/API.md G70-G73.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, onResponseHookHandler, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import { originalCreateReply } from '../families/create-reply.js';
import type { IdempotencyStore, TaskStore } from '../store/types.js';
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

/** A request's claim on an Idempotency-Key; the task it creates carries it (store/types.ts `idempotencyTaskKey`). */
export interface IdempotencyClaim {
  keyId: string;
  idemKey: string;
  claimedAt: number;
}

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** A claim this old without a response is taken to be from a request that died (crash, restart). */
const STALE_CLAIM_MS = 2 * 60_000;
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

export function registerIdempotency(scope: FastifyInstance, store: IdempotencyStore, tasks: TaskStore): void {
  scope.decorateRequest('idempotency', undefined);

  const claim: preHandlerAsyncHookHandler = async function claim(request, reply) {
    const idemKey = request.headers['idempotency-key'];
    if (idemKey === undefined) return;
    if (typeof idemKey !== 'string' || !VALID_KEY.test(idemKey)) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1-255 printable ASCII characters without spaces', { param: 'Idempotency-Key' });
    }
    const fingerprint = createHash('sha256').update(`${request.routeOptions.url ?? ''}\n${JSON.stringify(request.body ?? null)}`).digest('base64url');
    const now = Date.now();
    const found = store.begin(request.apiKey.id, idemKey, fingerprint, now, now - STALE_CLAIM_MS, now - IDEMPOTENCY_WINDOW_MS);
    switch (found.state) {
      case 'new':
        request.idempotency = { keyId: request.apiKey.id, idemKey, claimedAt: now };
        return;
      case 'recovered': { // the first request committed its task, then died before answering
        const task = tasks.get(found.taskId);
        if (!task) throw new AppError('invalid_task_state', `The task created under Idempotency-Key ${idemKey} no longer exists; use a new key`, { param: 'Idempotency-Key' });
        const payload = JSON.stringify(originalCreateReply(task));
        store.complete(request.apiKey.id, idemKey, 200, payload);
        return reply.code(200).header('content-type', 'application/json; charset=utf-8').header('idempotent-replayed', 'true').send(payload);
      }
      case 'replay':
        return reply.code(found.statusCode).header('content-type', 'application/json; charset=utf-8')
          .header('idempotent-replayed', 'true').send(found.response);
      case 'mismatch':
        throw new AppError('idempotency_key_reused', `Idempotency-Key ${idemKey} was already used with another request body (or endpoint) in the last 24 hours; use a new key for a new request`, { param: 'Idempotency-Key' });
      case 'in_progress':
        throw new AppError('idempotency_in_progress', `A request with Idempotency-Key ${idemKey} is still being processed; retry shortly`, { param: 'Idempotency-Key', headers: { 'retry-after': '1' } });
    }
  };

  const keepResponse: onSendHookHandler = function storeResponse(request, reply, payload, done) {
    const claimed = request.idempotency;
    if (claimed) {
      request.idempotency = undefined;
      if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') store.complete(claimed.keyId, claimed.idemKey, reply.statusCode, payload);
      else store.abandon(claimed.keyId, claimed.idemKey);
    }
    done(null, payload);
  };

  const release: onResponseHookHandler = function release(request, _reply, done) {
    // no payload went out (the client went away first): free the key
    if (request.idempotency) store.abandon(request.idempotency.keyId, request.idempotency.idemKey);
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
