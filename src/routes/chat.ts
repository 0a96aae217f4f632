import type { FastifyInstance } from 'fastify';
import { ChatCompletionBody, toChatRequest } from '../contract/chat.js';
import type { ChatService } from '../chat/service.js';

/**
 * Endpoint 3: `POST {base_url}/v1/chat/completions`. Every error of this route, schema and auth
 * errors included, has the chat body `{code: "<status>", msg, data: null, success: false}` (D9).
 */
export function registerChatRoutes(app: FastifyInstance, chat: ChatService): void {
  app.post<{ Body: ChatCompletionBody }>('/v1/chat/completions', {
    config: { errorStyle: 'chat' },
    schema: {
      tags: ['chat'],
      summary: 'Chat completion (envelope, or server-sent events with stream: true)',
      body: ChatCompletionBody,
    },
  }, async (request, reply) => chat.handle(request, reply, toChatRequest(request.body), request.body.stream === true));
}
