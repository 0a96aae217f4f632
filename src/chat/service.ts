/**
 * Chat completions between the route and the providers: envelopes, SSE, usage, aborts.
 *
 * - Non-streaming: the provider's whole reply in the contract's envelope (decisions.md #21).
 * - Streaming (decisions.md #22): OpenAI `chat.completion.chunk` events, a finish chunk, a usage
 *   chunk (empty `choices`, as OpenAI sends with `stream_options.include_usage`), `data: [DONE]`.
 *   The status line is held back until the provider's first event (or one heartbeat interval), so a
 *   provider that fails at once gives a normal JSON error with its HTTP status; a failure after that
 *   ends the stream with `data: {"error": {...}}` and no `[DONE]` (G40).
 * - A client that goes away aborts the provider (ctx.signal).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { abortWhenClientGone } from '../http/client-gone.js';
import { toAppError } from '../http/error-handler.js';
import { vetMediaUrl } from '../media/safe-fetch.js';
import type { UsageStore } from '../store/types.js';
import type { ChatProviderRegistry } from './registry.js';
import { ChatChunks } from './chunks.js';
import { SseWriter } from './sse.js';
import { randomToken } from '../ids.js';
import { countPromptTokens, countTextTokens } from './tokens.js';
import type { ChatContext, ChatRequest, ChatStreamEvent, ChatUsage, FinishReason } from './types.js';

/** `chatcmpl-` + 128 random bits, URL-safe. */
export function newChatCompletionId(): string {
  return `chatcmpl-${randomToken(16)}`;
}

export interface ChatSuccessEnvelope {
  code: '200';
  msg: '成功';
  data: { content: string; usage: ChatUsage; model: string; id: string; finish_reason: FinishReason };
  success: true;
}

export interface ChatServiceOptions {
  registry: ChatProviderRegistry;
  usage: UsageStore;
  /** A `: ping` comment after this long without an event, ms (also how long the status line waits). */
  heartbeatMs: number;
  /** MEDIAGATE_ALLOW_PRIVATE_URLS: media URLs may name private addresses (local testing only). */
  allowPrivateUrls?: boolean;
}

class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'AbortError';
  }
}

export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  /** Answers one validated request on `reply`, streamed or whole. */
  async handle(request: FastifyRequest, reply: FastifyReply, chat: ChatRequest, stream: boolean): Promise<ChatSuccessEnvelope | FastifyReply> {
    const provider = this.options.registry.providerFor(chat.model);
    await this.vetMedia(chat);
    const abort = abortWhenClientGone(reply, () => new ClientGone());
    const ctx: ChatContext = { signal: abort.signal, log: request.log as unknown as Logger };
    const id = newChatCompletionId();
    try {
      if (!stream) {
        // A long completion writes nothing for a while: lift the socket idle timeout meanwhile.
        const socket = typeof request.raw.socket?.setTimeout === 'function' ? request.raw.socket : undefined;
        const idle = socket?.timeout;
        socket?.setTimeout(0);
        try {
          const done = await provider.complete(chat, ctx);
          this.record(request, chat.model, id, done.usage);
          return { code: '200', msg: '成功', data: { content: done.content, usage: done.usage, model: chat.model, id, finish_reason: done.finishReason }, success: true };
        } catch (err) {
          if (!abort.signal.aborted) throw err;
          // The client went away: nothing to answer, nothing billed (G41).
          request.log.info({ chatId: id }, 'chat completion aborted by the client');
          reply.hijack();
          reply.raw.destroy();
          return reply;
        } finally {
          if (idle !== undefined && !socket?.destroyed) socket?.setTimeout(idle);
        }
      }
      return await this.stream(request, reply, chat, id, provider.stream(chat, ctx), abort.signal);
    } finally {
      abort.release();
    }
  }

  private async stream(request: FastifyRequest, reply: FastifyReply, chat: ChatRequest, id: string, events: AsyncIterable<ChatStreamEvent>, signal: AbortSignal): Promise<FastifyReply> {
    const iterator = events[Symbol.asyncIterator]();
    const pending = iterator.next();
    let first: IteratorResult<ChatStreamEvent> | undefined;
    try {
      first = await firstOrTimeout(pending, this.options.heartbeatMs);
    } catch (err) {
      if (!signal.aborted) throw err; // before the first byte: a normal JSON error (chat body)
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }

    reply.hijack();
    const sse = new SseWriter(reply.raw, this.options.heartbeatMs, headersOf(reply));
    const chunks = new ChatChunks(id, Math.floor(Date.now() / 1000), chat.model);

    let text = '';
    try {
      // The role chunk (and the status line) goes out at the end of this turn when the provider
      // opened its stream (after whatever else is waiting, e.g. other requests to dispatch, so it
      // costs them nothing); otherwise it leaves with the first content (one segment), or with a
      // ping if nothing came within a heartbeat.
      sse.holdJson(chunks.role());
      if (first?.done === false && first.value.type === 'open') sse.flushSoon();
      if (first === undefined) await sse.ping();
      let result = first ?? await pending;
      for (;;) {
        if (result.done) throw new AppError('upstream_error', 'The model provider ended the stream without finishing the reply');
        const event = result.value;
        if (event.type === 'open') {
          // nothing to send: the stream is open already
        } else if (event.type === 'delta') {
          if (event.content !== '') {
            text += event.content;
            const full = sse.sendJson(chunks.content(event.content));
            if (full) await full; // only when the client is slow: backpressure
          }
        } else {
          sse.sendJson(chunks.finish(event.finishReason));
          sse.sendJson(chunks.usage(event.usage));
          await sse.done();
          this.record(request, chat.model, id, event.usage);
          return reply;
        }
        if (sse.isClosed) throw new ClientGone();
        result = await iterator.next();
      }
    } catch (err) {
      if (signal.aborted || sse.isClosed) {
        // The client went away: the provider was aborted; bill what was generated and sent (G41).
        const promptTokens = countPromptTokens(chat);
        const completionTokens = countTextTokens(text);
        this.record(request, chat.model, id, { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens });
        request.log.info({ chatId: id, completionTokens }, 'chat stream aborted by the client');
        sse.end();
        void iterator.return?.()?.catch(() => undefined);
        return reply;
      }
      const appErr = toAppError(err);
      if (appErr.status >= 500) request.log.error({ err, chatId: id }, 'chat stream failed after it started');
      await sse.send({ error: { message: appErr.message, type: appErr.type, param: appErr.param ?? null, code: appErr.code } });
      sse.end();
      return reply;
    }
  }

  /**
   * Media URLs go to the provider as URLs, and a provider inside the operator's network (vLLM,
   * Ollama) would fetch them from there: the address rule of caller URLs applies to them too.
   */
  private async vetMedia(chat: ChatRequest): Promise<void> {
    const checks: Array<Promise<void>> = [];
    chat.messages.forEach((m, i) => {
      if (typeof m.content === 'string') return;
      m.content.forEach((part, j) => {
        if (part.type === 'image_url') {
          checks.push(vetMediaUrl(part.image_url.url, { field: `messages[${i}].content[${j}].image_url.url`, allowPrivate: this.options.allowPrivateUrls ?? false }));
        }
      });
    });
    if (checks.length > 0) await Promise.all(checks);
  }

  private record(request: FastifyRequest, model: string, id: string, usage: ChatUsage): void {
    try {
      this.options.usage.recordChatUsage({
        keyId: request.apiKey.id, model, requestId: id,
        promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, createdAt: Date.now(),
      });
    } catch (err) {
      request.log.error({ err, chatId: id }, 'could not record chat usage');
    }
  }
}

/** The first result, or undefined when `ms` pass first (the promise keeps running). */
async function firstOrTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (ms <= 0) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => { timer = setTimeout(resolve, ms, undefined); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Headers already set on the reply (x-request-id from the onRequest hook), for the hijacked response. */
function headersOf(reply: FastifyReply): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) out[name] = value;
  return out;
}
