/**
 * Chat at a relay's upstream (G98): `POST {base_url}/v1/chat/completions` with the
 * contract's body; the non-streamed reply is the contract's envelope `{code: "200", msg, data:
 * {content, usage, model, id, finish_reason}, success}`, the streamed one its SSE
 * `chat.completion.chunk`s, passed on delta by delta with the finish reason and the usage chunk's
 * usage. The same timeouts as the OpenAI-compatible provider (G53), its SSE parser and usage
 * counting; failures mapped by errors.ts (a channel fault before the first event is a
 * ChannelError, so the chat service tries the next candidate).
 */
import type { Dispatcher } from 'undici';
import type { ChatApi, ChatCompletion, ChatContext, ChatRequest, ChatStreamEvent } from '../../chat/types.js';
import { AppError } from '../../errors.js';
import { CallGuard, abortError, mapFinishReason, toUpstreamBody } from '../toolkit/openai-chat-wire.js';
import { SseParser } from '../toolkit/sse-parse.js';
import { completeUsage, readUsage } from '../toolkit/usage.js';
import { ChannelError } from '../types.js';
import { chatFailure, errorInfoOf, malformedReply, transportFailure, type Scrub } from '../toolkit/errors.js';
import { readBounded, readStart } from '../toolkit/upstream-call.js';
import type { RelayHttp } from './http.js';
import { noteUpstreamAnswer } from '../../tracing/tracing.js';

/** A chat reply that cannot be read: the chat service tries the next candidate (G98). */
const malformedChatReply = (id: string, what: string): ChannelError => ChannelError.of(malformedReply(id, what));

export interface RelayChatOptions {
  id: string;
  http: RelayHttp;
  scrub: Scrub;
  /** The whole call, a whole stream included. */
  timeoutMs: number;
  /** The longest silence inside a stream. */
  stallTimeoutMs: number;
}

const MAX_JSON_BYTES = 16 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
/** After `[DONE]`, how long the rest of the body (normally nothing) is read before the connection is dropped. */
const DRAIN_MS = 2000;
const CHAT = { base: 'base', path: '/v1/chat/completions' } as const;

export function relayChat(o: RelayChatOptions): ChatApi {
  const { id, http, scrub } = o;

  /**
   * Why the call was cut, as the error to throw: the caller's reason; a timeout before anything
   * reached the caller is the channel's fault (another candidate may answer), after that a 504.
   */
  function cutError(guard: CallGuard, ctx: ChatContext, beforeFirstEvent: boolean): unknown {
    const cut = guard.cut;
    if (ctx.signal.aborted || !(cut instanceof AppError)) return cut;
    return beforeFirstEvent ? ChannelError.of(cut) : cut;
  }

  function failure(err: unknown, guard: CallGuard, ctx: ChatContext, beforeFirstEvent: boolean): unknown {
    if (guard.cut !== undefined) return cutError(guard, ctx, beforeFirstEvent);
    if (err instanceof AppError) return err;
    return beforeFirstEvent ? transportFailure(id, err) : new AppError('upstream_error', transportFailure(id, err).message, { retryable: true });
  }

  /** Sends the request; resolves with a 2xx answer or throws the mapped error. */
  async function send(req: ChatRequest, stream: boolean, guard: CallGuard, ctx: ChatContext): Promise<Dispatcher.ResponseData> {
    const body = toUpstreamBody(req, ctx.upstreamModel, false);
    if (stream) body.stream = true;
    const { origin, path } = http.target(CHAT);
    let res: Dispatcher.ResponseData;
    try {
      res = await http.dispatcher.request({
        origin,
        path,
        method: 'POST',
        signal: guard.signal,
        body: JSON.stringify(body),
        headers: http.headers({ accept: stream ? 'text/event-stream' : 'application/json' }),
      });
    } catch (err) {
      throw failure(err, guard, ctx, true);
    }
    noteUpstreamAnswer(res.statusCode, res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      let text: string;
      try {
        // its status says what it is, whatever its size (a proxy's 503 page): read up to the bound, cut there (G478)
        text = await readStart(res, MAX_ERROR_BYTES);
      } catch (err) {
        throw failure(err, guard, ctx, true);
      }
      const error = chatFailure(id, res.statusCode, res.headers, text, scrub, ctx.upstreamModel);
      ctx.log.warn({ channel: id, model: req.model, upstreamStatus: res.statusCode, code: error.code }, 'relay upstream answered a chat call with an error');
      throw error;
    }
    return res;
  }

  /** The contract's envelope as a completion; an envelope that says failure is mapped like an HTTP error. */
  async function fromEnvelope(text: string, req: ChatRequest, ctx: ChatContext): Promise<ChatCompletion> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw malformedChatReply(id, 'malformed JSON for a chat call');
    }
    const env = (json !== null && typeof json === 'object' ? json : {}) as { code?: unknown; success?: unknown; data?: unknown };
    if (env.success === false || (env.code !== undefined && String(env.code) !== '200')) {
      const code = String(env.code ?? '');
      throw chatFailure(id, /^[1-5]\d\d$/.test(code) && code !== '200' ? Number(code) : 502, {}, text, scrub, ctx.upstreamModel);
    }
    const data = env.data as { content?: unknown; usage?: unknown; finish_reason?: unknown } | null | undefined;
    if (!data || typeof data !== 'object' || typeof data.content !== 'string') throw malformedChatReply(id, 'a chat envelope without data.content');
    return {
      content: data.content,
      finishReason: mapFinishReason(data.finish_reason),
      usage: await completeUsage(readUsage(data.usage), req.messages, data.content),
    };
  }

  async function complete(req: ChatRequest, ctx: ChatContext): Promise<ChatCompletion> {
    const guard = new CallGuard(ctx, id, o.timeoutMs);
    try {
      const res = await send(req, false, guard, ctx);
      let text: string;
      try {
        text = await readBounded(res, MAX_JSON_BYTES, () => malformedChatReply(id, `a chat reply larger than ${MAX_JSON_BYTES} bytes`));
      } catch (err) {
        throw failure(err, guard, ctx, true);
      }
      return await fromEnvelope(text, req, ctx);
    } finally {
      guard.dispose();
    }
  }

  async function* stream(req: ChatRequest, ctx: ChatContext): AsyncGenerator<ChatStreamEvent> {
    const guard = new CallGuard(ctx, id, o.timeoutMs);
    let finished = false;
    let opened = false;
    try {
      const res = await send(req, true, guard, ctx);
      if (String(res.headers['content-type'] ?? '').includes('application/json')) {
        // the upstream answered the envelope instead of a stream: one delta with the whole reply
        let text: string;
        try {
          text = await readBounded(res, MAX_JSON_BYTES, () => malformedChatReply(id, `a chat reply larger than ${MAX_JSON_BYTES} bytes`));
        } catch (err) {
          throw failure(err, guard, ctx, true);
        }
        const done = await fromEnvelope(text, req, ctx);
        if (done.content) yield { type: 'delta', content: done.content };
        finished = true;
        yield { type: 'done', finishReason: done.finishReason, usage: done.usage };
        return;
      }
      guard.startStallTimer(o.stallTimeoutMs);
      opened = true;
      yield { type: 'open' };
      const parser = new SseParser();
      const reading = new StreamReading(id, scrub);
      try {
        for await (const chunk of res.body) {
          if (finished) continue; // after [DONE]: read the rest so the connection can be reused
          guard.alive();
          for (const ev of parser.push(chunk as Buffer)) {
            const out = reading.take(ev.data, ev.event);
            if (out) yield out;
            if (reading.sawDone) break;
          }
          if (reading.sawDone) {
            finished = true;
            guard.drain(DRAIN_MS); // nothing after the reply can time it out or fail it
            yield await reading.done(req);
          }
        }
        if (!finished) {
          for (const ev of parser.end()) {
            const out = reading.take(ev.data, ev.event);
            if (out) yield out;
            if (reading.sawDone) break;
          }
        }
      } catch (err) {
        if (finished) return; // the reply was complete; a hiccup while draining does not matter
        throw failure(err, guard, ctx, false);
      }
      if (finished) return;
      if (guard.cut !== undefined) throw cutError(guard, ctx, false);
      // the body ended without [DONE]: complete only if the upstream at least gave a finish_reason (G57)
      if (!reading.sawDone && !reading.hasFinish) {
        throw new AppError('upstream_error', `the relay upstream "${id}" ended the stream before the reply was complete`, { retryable: true });
      }
      finished = true;
      yield await reading.done(req);
    } catch (err) {
      throw guard.cut !== undefined ? cutError(guard, ctx, !opened) : err;
    } finally {
      guard.dispose();
      // the caller stopped early, or a failure: drop the upstream connection at once
      if (!finished) guard.abort(abortError());
    }
  }

  return { complete, stream };
}

/** The state of one streamed reply: text so far, finish reason, usage, whether `[DONE]` came. */
class StreamReading {
  content = '';
  sawDone = false;
  private finish: unknown;
  private usage: ReturnType<typeof readUsage>;

  constructor(
    private readonly id: string,
    private readonly scrub: Scrub,
  ) {}

  get hasFinish(): boolean {
    return this.finish !== undefined;
  }

  /** One SSE event: a delta to pass on, or nothing (role chunk, finish, usage, `[DONE]`); an error chunk throws. */
  take(data: string, event: string): ChatStreamEvent | undefined {
    if (data === '[DONE]') {
      this.sawDone = true;
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new AppError('upstream_error', `the relay upstream "${this.id}" sent a malformed stream chunk in the middle of the reply`, { retryable: true });
    }
    const o = json as { error?: unknown; choices?: unknown; usage?: unknown } | null;
    if (event === 'error' || (o !== null && typeof o === 'object' && o.error !== undefined && o.error !== null)) {
      const said = this.scrub(errorInfoOf(json).message);
      throw new AppError('upstream_error', `the relay upstream "${this.id}" reported an error in the middle of the reply${said ? `: ${said}` : ''}`, {
        retryable: true,
      });
    }
    const u = readUsage(o?.usage);
    if (u) this.usage = u;
    const choice = Array.isArray(o?.choices) ? (o.choices[0] as { delta?: { content?: unknown }; finish_reason?: unknown } | undefined) : undefined;
    if (!choice || typeof choice !== 'object') return undefined;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finish = choice.finish_reason;
    const piece = choice.delta?.content;
    if (typeof piece !== 'string' || piece === '') return undefined;
    this.content += piece;
    return { type: 'delta', content: piece };
  }

  async done(req: ChatRequest): Promise<ChatStreamEvent> {
    return { type: 'done', finishReason: mapFinishReason(this.finish), usage: await completeUsage(this.usage, req.messages, this.content) };
  }
}
