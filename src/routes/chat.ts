import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { requireMayCreate } from '../auth/key-rules.js';
import type { ChatCall, ChatService } from '../chat/service.js';
import { SseWriter } from '../chat/sse.js';
import { ChatCompletionBody, ChatCompletionReply, ChatCompletionStream, toChatRequest } from '../contract/chat.js';
import { AppError } from '../errors.js';
import type { LiveRequests } from '../http/live-requests.js';
import { responses } from '../contract/responses.js';

/**
 * Endpoint 3: `POST {base_url}/v1/chat/completions`. Every error of this route, schema and auth
 * errors included, has the chat body `{code: "<status>", msg, data: null, success: false}` (D9).
 * The HTTP side only: the signal that stops the call (client gone, key revoked, shutdown), the
 * socket, the hijacked SSE response; envelopes, streaming and billing are the chat service's.
 */
export function registerChatRoutes(app: FastifyInstance, chat: ChatService, live: LiveRequests): void {
  app.post<{ Body: ChatCompletionBody }>(
    '/v1/chat/completions',
    {
      config: { errorStyle: 'chat' },
      schema: {
        tags: ['chat'],
        summary: 'Chat completion (envelope, or server-sent events with stream: true)',
        body: ChatCompletionBody,
        response: responses(
          {
            200: {
              description: 'The whole reply (JSON), or with `stream: true` a stream of server-sent events',
              content: { 'application/json': { schema: ChatCompletionReply }, 'text/event-stream': { schema: ChatCompletionStream } },
            },
          },
          [400, 401, 402, 403, 413, 429, 500, 502, 503, 504],
          { style: 'chat' },
        ),
      },
    },
    async (request, reply) => {
      requireMayCreate(request.apiKey, 'chat', request.body.model); // G301, G304
      const gone = live.track(reply, request.apiKeyHash);
      const call: ChatCall = {
        keyId: request.apiKey.id,
        accountId: request.apiKey.accountId,
        request: toChatRequest(request.body),
        signal: gone.signal,
        log: request.log as unknown as Logger,
      };
      try {
        if (request.body.stream === true) {
          const outcome = await chat.stream(call, (heartbeatMs) => {
            reply.hijack();
            return new SseWriter(reply.raw, heartbeatMs, headersOf(reply));
          });
          if (outcome === 'client-gone') dropConnection(reply);
          return reply;
        }
        // A long completion writes nothing for a while: lift the socket idle timeout meanwhile.
        const socket = typeof request.raw.socket?.setTimeout === 'function' ? request.raw.socket : undefined;
        const idle = socket?.timeout;
        socket?.setTimeout(0);
        try {
          return await chat.complete(call);
        } catch (err) {
          if (!gone.signal.aborted) throw err;
          if (gone.signal.reason instanceof AppError) throw gone.signal.reason; // revoked key, shutdown: answered as errors
          // The client went away: nothing to answer, nothing billed (G41).
          request.log.info('chat completion aborted by the client');
          dropConnection(reply);
          return reply;
        } finally {
          if (idle !== undefined && !socket?.destroyed) socket?.setTimeout(idle);
        }
      } finally {
        gone.release();
      }
    },
  );
}

/** Ends a request whose client is gone without answering it. */
function dropConnection(reply: FastifyReply): void {
  reply.hijack();
  reply.raw.destroy();
}

/** Headers already set on the reply (x-request-id from the onRequest hook), for the hijacked response. */
function headersOf(reply: FastifyReply): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) out[name] = value;
  return out;
}
