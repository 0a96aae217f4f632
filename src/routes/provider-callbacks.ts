/**
 * `POST /v1/provider-callbacks/{provider}/{task}` (G158): where upstreams notify the end
 * of a generation (Replicate and fal webhooks). No bearer key: the delivery's signature is its
 * authentication, which the provider checks against the raw bytes, read as they came whatever the
 * content type, up to {@link CALLBACK_BODY_LIMIT}. At most {@link CALLBACK_SLOTS} deliveries are
 * read at once per process; more are answered 429 before their body is read. A verified delivery
 * is answered 200 `{received: true, outcome}` whatever it did (tasks/callbacks.ts), so the upstream
 * does not deliver it again; refusals are 4xx (a 503 only when the upstream's keys cannot be had).
 */
import { Type } from '../typebox.js';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { CALLBACK_ROUTE, type CallbackReceiver } from '../tasks/callbacks.js';
import { CallbackReply } from '../contract/gateway-replies.js';
import { responses } from '../contract/responses.js';

/** The largest delivery read, bytes (a Replicate prediction with its logs, a fal result). */
export const CALLBACK_BODY_LIMIT = 2 * 1024 * 1024;
/** Deliveries read at once per process. */
export const CALLBACK_SLOTS = 32;

const Params = Type.Object({
  provider: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$', description: 'a provider id of providers.json' }),
  task: Type.String({ minLength: 1, maxLength: 100, description: 'the task id' }),
});

export async function registerProviderCallbackRoutes(app: FastifyInstance, receiver: CallbackReceiver): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    let reading = 0;
    scope.addHook('onRequest', (_request, reply, done) => {
      if (reading >= CALLBACK_SLOTS) {
        done(
          new AppError('rate_limited', `More than ${CALLBACK_SLOTS} provider callbacks at once; deliver this one again shortly`, {
            headers: { 'retry-after': '1' },
          }),
        );
        return;
      }
      reading++;
      reply.raw.once('close', () => {
        reading--;
      });
      done();
    });
    scope.post<{ Params: { provider: string; task: string } }>(
      CALLBACK_ROUTE,
      {
        schema: {
          tags: ['provider-callbacks'],
          summary: "A provider's notice that a generation ended (signed by the upstream; no bearer key)",
          security: [],
          params: Params,
          response: responses({ 200: CallbackReply }, [400, 401, 404, 413, 429, 500, 503]),
        },
        bodyLimit: CALLBACK_BODY_LIMIT,
      },
      async (request): Promise<CallbackReply> => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const outcome = await receiver.receive(request.params.provider, request.params.task, { headers: request.headers, body });
        return { received: true, outcome };
      },
    );
  });
}
