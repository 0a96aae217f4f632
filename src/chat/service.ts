/**
 * Chat completions between the route and the providers: envelopes, SSE, usage, aborts.
 *
 * - Non-streaming: the provider's whole reply in the contract's envelope (D21).
 * - Streaming (D22): OpenAI `chat.completion.chunk` events, a finish chunk, a usage
 *   chunk (empty `choices`, as OpenAI sends with `stream_options.include_usage`), `data: [DONE]`.
 *   The status line is held back until the provider's first event (or one heartbeat interval), so a
 *   provider that fails at once gives a normal JSON error with its HTTP status; a failure after that
 *   ends the stream with `data: {"error": {...}}` and no `[DONE]` (G40).
 * - A client that goes away aborts the provider (ctx.signal).
 */
import type { Logger } from 'pino';
import type { ChatCompletionReply } from '../contract/chat.js';
import { AppError, asAppError, ClientGone } from '../errors.js';
import { vetMediaUrl } from '../media/safe-fetch.js';
import type { UsageStore } from '../store/types.js';
import { orderCandidates, type Channels } from '../providers/channels.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { ChannelError } from '../providers/types.js';
import type { ChatCredits, ChatSettle } from './chat-credits.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { slotSpan } from '../tracing/tracing.js';
import { ChatChunks } from './chunks.js';
import type { SseWriter } from './sse.js';
import { randomToken } from '../ids.js';
import { countPromptTokens, countTextTokens } from './tokens.js';
import type { ChatApi, ChatContext, ChatRequest, ChatStreamEvent, ChatUsage } from './types.js';

/** `chatcmpl-` + 128 random bits, URL-safe. */
export function newChatCompletionId(): string {
  return `chatcmpl-${randomToken(16)}`;
}

/** The whole reply's envelope: the type of its schema (contract/chat.ts, G240). */
export type ChatSuccessEnvelope = ChatCompletionReply;

export interface ChatServiceOptions {
  /** The providers and the route of each chat model (G90). */
  providers: ProviderRegistry;
  /** Slots and circuits of the channels calls go through (G91). */
  channels: Channels;
  usage: UsageStore;
  /** A `: ping` comment after this long without an event, ms (also how long the status line waits). */
  heartbeatMs: number;
  /** MEDIAGATE_ALLOW_PRIVATE_URLS: media URLs may name private addresses (local testing only). */
  allowPrivateUrls?: boolean;
  /** Holds and settles each request's credits (G206); absent: none. */
  credits?: ChatCredits;
  /** Token counts and times to first content (G224); absent: not measured. */
  metrics?: Pick<GatewayMetrics, 'chatUsage' | 'chatFirstContent'> | undefined;
}

/** One chat call: who asks, what, and the signal that fires when the client goes away. */
export interface ChatCall {
  keyId: string;
  /** The key's account, whose credits the call spends (G206). */
  accountId: string;
  request: ChatRequest;
  signal: AbortSignal;
  log: Logger;
}

/** The event stream to the client, as the streaming loop uses it (an {@link SseWriter} on HTTP). */
export type ChatEventSink = Pick<SseWriter, 'holdJson' | 'flushSoon' | 'ping' | 'sendJson' | 'send' | 'done' | 'end' | 'isClosed'>;

/** Opens the client's event stream (status line and headers leave with its first write). */
export type OpenChatStream = (heartbeatMs: number) => ChatEventSink;

/** How a streamed call ended: streamed (whole, cut by the client, or ended by an error event), or the client left before it opened. */
export type ChatStreamOutcome = 'streamed' | 'client-gone';

export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  /**
   * The whole reply in the contract's envelope, its usage recorded. A provider failure throws
   * (the caller's error body); when the client went away the call rejects with the abort and
   * nothing is billed (G41).
   */
  async complete(call: ChatCall): Promise<ChatSuccessEnvelope> {
    const route = this.routeOf(call.request.model);
    await this.vetMedia(call.request);
    const id = newChatCompletionId();
    const settle = await this.hold(call, id);
    const { channels } = this.options;
    let refused: ChannelError | undefined;
    let done: Awaited<ReturnType<ChatApi['complete']>> | undefined;
    try {
      for (const candidate of orderCandidates(channels.usable(route))) {
        const chat = this.chatOf(candidate);
        try {
          done = await channels.call(candidate.provider, () => chat.complete(call.request, this.contextOf(call, candidate)), call.signal);
          break;
        } catch (err) {
          if (!(err instanceof ChannelError) || call.signal.aborted) throw err;
          refused = this.refused(call, candidate, err);
        }
      }
      if (!done) throw refused ?? this.unavailable(route);
    } finally {
      if (!done) settle(undefined); // nothing was generated: the hold goes back
    }
    this.record(call, id, done.usage, settle);
    return {
      code: '200',
      msg: '成功',
      data: { content: done.content, usage: done.usage, model: call.request.model, id, finish_reason: done.finishReason },
      success: true,
    };
  }

  /**
   * Streams the reply (G40). Anything thrown before the provider's first event is thrown from here
   * (a normal HTTP error); after the stream opened, a failure ends it with an error event. A client
   * that leaves aborts the provider; what was generated and sent is billed (G41).
   */
  async stream(call: ChatCall, open: OpenChatStream): Promise<ChatStreamOutcome> {
    const { request: chat } = call;
    const started = performance.now();
    const route = this.routeOf(chat.model);
    await this.vetMedia(chat);
    const id = newChatCompletionId();
    const settle = await this.hold(call, id);
    let fault = false;
    let lease: OpenedStream['lease'] | undefined;
    try {
      const opened = await this.openStream(call, route);
      if (opened === 'client-gone') return 'client-gone';
      lease = opened.lease;
      const { iterator, pending, first } = opened;
      return await this.relayStream(call, id, open, { iterator, pending, first, started }, settle, (err) => {
        fault = err instanceof ChannelError;
      });
    } finally {
      lease?.release(fault);
      settle(undefined); // a no-op once the stream settled what it generated
    }
  }

  /** The request's credit hold (G206): a no-op settle without credits or for a free model; throws the 402. */
  private async hold(call: ChatCall, id: string): Promise<ChatSettle> {
    return this.options.credits ? this.options.credits.hold(call.accountId, call.keyId, id, call.request, call.log) : () => undefined;
  }

  /**
   * The stream of the first candidate channel that opens one (G90): a channel fault before its
   * first event (within one heartbeat interval: refused, 429, 5xx, a connect timeout) moves on to
   * the next. The slot at the channel is held while the stream runs.
   */
  private async openStream(call: ChatCall, route: RouteCandidate[]): Promise<OpenedStream | 'client-gone'> {
    const { signal } = call;
    let refused: ChannelError | undefined;
    for (const candidate of orderCandidates(this.options.channels.usable(route))) {
      const chat = this.chatOf(candidate);
      let lease: OpenedStream['lease'];
      try {
        lease = await this.options.channels.acquire(candidate.provider, signal);
      } catch (err) {
        if (signal.aborted) return stoppedBefore(signal);
        if (err instanceof ChannelError) {
          refused = err;
          continue;
        }
        throw err;
      }
      // the stream's upstream calls happen in the slot's span (G228), which ends with the slot
      const traced = slotSpan(candidate.provider);
      const held = lease;
      lease = {
        release: (failed) => {
          traced.end(failed ? 'fault' : 'ok');
          held.release(failed);
        },
      };
      const iterator = traced.run(() => chat.stream(call.request, this.contextOf(call, candidate))[Symbol.asyncIterator]());
      const pending = traced.run(() => iterator.next());
      try {
        return { iterator, pending, first: await firstOrTimeout(pending, this.options.heartbeatMs), lease };
      } catch (err) {
        lease.release(err instanceof ChannelError);
        if (signal.aborted) return stoppedBefore(signal);
        if (!(err instanceof ChannelError)) throw err; // before the first byte: a normal JSON error (chat body)
        refused = this.refused(call, candidate, err);
      }
    }
    throw refused ?? this.unavailable(route);
  }

  /** The opened stream to the client: role, deltas, finish, usage; or an error event (G40). */
  private async relayStream(
    call: ChatCall,
    id: string,
    open: OpenChatStream,
    opened: Omit<OpenedStream, 'lease'> & { started: number },
    settle: ChatSettle,
    failed: (err: unknown) => void,
  ): Promise<ChatStreamOutcome> {
    const { request: chat, signal } = call;
    const { iterator, pending, first, started } = opened;
    const sse = open(this.options.heartbeatMs);
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
      let result = first ?? (await pending);
      for (;;) {
        if (result.done) throw new AppError('upstream_error', 'The model provider ended the stream without finishing the reply');
        const event = result.value;
        if (event.type === 'delta') {
          if (event.content !== '') {
            if (text === '') this.options.metrics?.chatFirstContent(chat.model, (performance.now() - started) / 1000);
            text += event.content;
            const full = sse.sendJson(chunks.content(event.content));
            if (full) await full; // only when the client is slow: backpressure
          }
        } else if (event.type === 'done') {
          sse.sendJson(chunks.finish(event.finishReason));
          sse.sendJson(chunks.usage(event.usage));
          await sse.done();
          this.record(call, id, event.usage, settle);
          return 'streamed';
        } // 'open': nothing to send, the stream is open already
        if (sse.isClosed) throw new ClientGone();
        result = await iterator.next();
      }
    } catch (err) {
      if (signal.aborted || sse.isClosed) {
        // The client went away, or the gateway stopped the stream (its key was revoked, it shuts
        // down): the provider was aborted; what was generated and sent is billed (G41). The
        // gateway's reason goes to a client that is still there as an error event.
        void iterator.return?.()?.catch(() => undefined);
        const usage = await usageOf(chat, text);
        this.record(call, id, usage, settle);
        const { completion_tokens: completionTokens } = usage;
        const stop: unknown = signal.aborted ? signal.reason : undefined;
        if (stop instanceof AppError && !sse.isClosed) {
          call.log.info({ chatId: id, completionTokens, code: stop.code }, 'chat stream stopped by the gateway');
          await sse.send({ error: { message: stop.message, type: stop.type, param: stop.param ?? null, code: stop.code } });
        } else {
          call.log.info({ chatId: id, completionTokens }, 'chat stream aborted by the client');
        }
        sse.end();
        return 'streamed';
      }
      failed(err);
      // what was generated before the failure is charged (G206); usage is recorded as for an abort
      if (text !== '') this.record(call, id, await usageOf(chat, text), settle);
      const appErr = asAppError(err);
      if (appErr.status >= 500) call.log.error({ err, chatId: id }, 'chat stream failed after it started');
      await sse.send({ error: { message: appErr.message, type: appErr.type, param: appErr.param ?? null, code: appErr.code } });
      sse.end();
      return 'streamed';
    }
  }

  /** The chat model's route, or a 503 when no channel of it takes calls now (G91). */
  private routeOf(model: string): RouteCandidate[] {
    const route = this.options.providers.routeModel(model, 'chat');
    if (this.options.channels.usable(route).length === 0) throw this.unavailable(route);
    return route;
  }

  private unavailable(route: RouteCandidate[]): AppError {
    const seconds = Math.max(1, Math.ceil(this.options.channels.retryAfterMs(route) / 1000));
    return new AppError('upstream_unavailable', `No model provider for this model takes requests now; retry in ${seconds} s`, {
      headers: { 'retry-after': String(seconds) },
    });
  }

  private chatOf(candidate: RouteCandidate): ChatApi {
    return this.options.providers.get(candidate.provider)!.chat!;
  }

  private contextOf(call: ChatCall, candidate: RouteCandidate): ChatContext {
    return { signal: call.signal, log: call.log, upstreamModel: candidate.model ?? call.request.model };
  }

  /** A channel refused the call: logged, and the next candidate is tried. */
  private refused(call: ChatCall, candidate: RouteCandidate, err: ChannelError): ChannelError {
    call.log.warn({ channel: candidate.provider, err: err.message }, 'the chat channel could not take the call; trying the next');
    return err;
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
          checks.push(
            vetMediaUrl(part.image_url.url, { field: `messages[${i}].content[${j}].image_url.url`, allowPrivate: this.options.allowPrivateUrls ?? false }),
          );
        }
      });
    });
    if (checks.length > 0) await Promise.all(checks);
  }

  /** Records a completion's usage and settles its credits; the reply does not wait for the writes (a failure is logged). */
  private record(call: ChatCall, id: string, usage: ChatUsage, settle: ChatSettle): void {
    settle(usage);
    this.options.metrics?.chatUsage(call.request.model, usage.prompt_tokens, usage.completion_tokens);
    this.options.usage
      .recordChatUsage({
        keyId: call.keyId,
        model: call.request.model,
        requestId: id,
        promptTokens: usage.prompt_tokens,
        completionTokens: usage.completion_tokens,
        createdAt: Date.now(),
      })
      .catch((err: unknown) => call.log.error({ err, chatId: id }, 'could not record chat usage'));
  }
}

/** The usage of a reply cut short: the prompt and the text generated so far, counted. */
async function usageOf(chat: ChatRequest, text: string): Promise<ChatUsage> {
  const [promptTokens, completionTokens] = await Promise.all([countPromptTokens(chat), countTextTokens(text)]);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

interface OpenedStream {
  iterator: AsyncIterator<ChatStreamEvent>;
  /** The first `next()` of the iterator. */
  pending: Promise<IteratorResult<ChatStreamEvent>>;
  /** Its result, when it came within one heartbeat interval. */
  first: IteratorResult<ChatStreamEvent> | undefined;
  lease: { release(failed: boolean): void };
}

/** Stopped before the stream opened: by the gateway (its reason is the answer), or the client left. */
function stoppedBefore(signal: AbortSignal): 'client-gone' {
  if (signal.reason instanceof AppError) throw signal.reason; // stopped by the gateway (revoked key, shutdown)
  return 'client-gone';
}

/** The first result, or undefined when `ms` pass first (the promise keeps running). */
async function firstOrTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (ms <= 0) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
