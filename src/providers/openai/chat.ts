/**
 * A chat provider backed by any OpenAI-compatible `/chat/completions` endpoint (OpenAI, vLLM,
 * llama.cpp server, Ollama, LiteLLM, ...). Decisions: G50-G59.
 */
import { PROBE_MAX_BYTES, PROBE_TIMEOUT_MS, probeResult, type ProbeResult } from '../probe.js';
import type { Dispatcher } from 'undici';
import { undici } from '../../http/undici.js';
import { AppError } from '../../errors.js';
import { ChannelError } from '../types.js';
import { readBounded, readStart, upstreamCall } from '../toolkit/upstream-call.js';
import type { ChatCompletion, ChatContext, ChatProvider, ChatRequest, ChatStreamEvent } from '../../chat/types.js';
import { errorInfoOf, mapHttpError, mapTransportError, quote, retryAfterSeconds, type HttpErrorContext } from '../toolkit/openai-errors.js';
import { SseParser } from '../toolkit/sse-parse.js';
import { completeUsage, readUsage } from '../toolkit/usage.js';
import { noteUpstreamAnswer } from '../../tracing/tracing.js';
import { CallGuard, abortError, isChannelFault, mapFinishReason, toUpstreamBody, type MaxTokensParam } from '../toolkit/openai-chat-wire.js';

export interface OpenAiChatProviderOptions {
  /** Provider id, `openai:<name>`. */
  id: string;
  /** Up to and including the API version, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Whole call, headers and body, streaming or not (G53). */
  timeoutMs: number;
  /** TCP (+TLS) connect. */
  connectTimeoutMs: number;
  /** Streams: longest silence allowed between two pieces of the body (default: timeoutMs). */
  stallTimeoutMs?: number | undefined;
  /** Default `max_completion_tokens`. */
  maxTokensParam?: MaxTokensParam | undefined;
  /** Where the key comes from, named in the 401/403 message (default "the upstream's apiKey"). */
  keySetting?: string | undefined;
  /** A dispatcher to use instead of a private keep-alive Agent (tests). */
  dispatcher?: Dispatcher | undefined;
}

export interface OpenAiChatProvider extends ChatProvider {
  readonly baseUrl: string;
  /** Closes the provider's pooled upstream connections. */
  close(): Promise<void>;
}

const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** After `[DONE]`, how long the rest of the body (normally nothing) is read before the connection is dropped. */
const DRAIN_MS = 2000;

export function createOpenAiChatProvider(options: OpenAiChatProviderOptions): OpenAiChatProvider {
  const { id, apiKey, timeoutMs } = options;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const target = new URL(`${baseUrl}/chat/completions`); // parsed once, not per call
  const origin = target.origin;
  const path = `${target.pathname}${target.search}`;
  const stallTimeoutMs = options.stallTimeoutMs ?? timeoutMs;
  const maxTokensParam = options.maxTokensParam ?? 'max_completion_tokens';
  const ownAgent = options.dispatcher
    ? undefined
    : new (undici().Agent)({
        connect: { timeout: options.connectTimeoutMs },
        // our own timers bound the call (CallGuard); undici's would cut long generations
        headersTimeout: 0,
        bodyTimeout: 0,
        keepAliveTimeout: 30_000,
      });
  const dispatcher: Dispatcher = options.dispatcher ?? ownAgent!;
  const keySetting = options.keySetting ?? `the apiKey of upstream "${id}"`;

  function errorContext(model: string): HttpErrorContext {
    return { upstream: id, model, apiKey, keySetting };
  }

  /** Sends the request; resolves with a 2xx response or throws the mapped error. */
  async function send(req: ChatRequest, stream: boolean, guard: CallGuard, ctx: ChatContext): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body = JSON.stringify(toUpstreamBody(req, ctx.upstreamModel, stream, maxTokensParam));
    let res: Dispatcher.ResponseData;
    try {
      res = await dispatcher.request({ origin, path, method: 'POST', headers, body, signal: guard.signal });
    } catch (err) {
      // no answer (refused, unknown host, connect or total timeout): the channel's fault (G89); a
      // caller's abort stays what it is
      if (guard.cut instanceof AppError && !ctx.signal.aborted) throw ChannelError.of(guard.cut);
      throw guard.cut ?? ChannelError.of(mapTransportError(err, id, 'connect'));
    }
    noteUpstreamAnswer(res.statusCode, res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      let text = '';
      try {
        // its status says what it is, whatever its size (a proxy's 503 page): read up to the bound, cut there (G478)
        text = await readStart(res, 64 * 1024);
      } catch (err) {
        throw guard.cut ?? mapTransportError(err, id, 'stream');
      }
      const error = mapHttpError(res.statusCode, res.headers, text, errorContext(req.model));
      ctx.log.warn({ upstream: id, model: req.model, upstreamStatus: res.statusCode, code: error.code }, 'chat upstream answered with an error');
      // our credentials or credit there (401, 402, 403), its limits (429), its faults (408, 5xx): another channel may answer
      if (isChannelFault(res.statusCode)) throw ChannelError.of(error, res.statusCode === 429 ? Number(retryAfterSeconds(res.headers)) * 1000 : undefined);
      throw error;
    }
    return res;
  }

  function parseCompletionJson(text: string, model: string): { content: string; finish: unknown; usage: ReturnType<typeof readUsage> } {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AppError('upstream_error', `The chat upstream "${id}" answered with malformed JSON for ${model}`);
    }
    const choice = (json as { choices?: unknown[] } | null)?.choices?.[0] as
      | { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }
      | undefined;
    if (!choice || typeof choice !== 'object' || !choice.message || typeof choice.message !== 'object') {
      const info = errorInfoOf(json);
      throw new AppError('upstream_error', `The chat upstream "${id}" answered without a reply${info.message ? `: ${quote(info.message, apiKey)}` : ''}`);
    }
    const c = choice.message.content ?? choice.message.refusal ?? '';
    if (typeof c !== 'string') throw new AppError('upstream_error', `The chat upstream "${id}" answered with a reply that is not text`);
    return { content: c, finish: choice.finish_reason, usage: readUsage((json as { usage?: unknown }).usage) };
  }

  async function complete(req: ChatRequest, ctx: ChatContext): Promise<ChatCompletion> {
    const guard = new CallGuard(ctx, id, timeoutMs);
    try {
      const res = await send(req, false, guard, ctx);
      let text: string;
      try {
        text = await readText(res, MAX_JSON_BYTES);
      } catch (err) {
        throw guard.cut ?? (err instanceof AppError ? err : mapTransportError(err, id, 'stream'));
      }
      const parsed = parseCompletionJson(text, req.model);
      return { content: parsed.content, finishReason: mapFinishReason(parsed.finish), usage: await completeUsage(parsed.usage, req.messages, parsed.content) };
    } finally {
      guard.dispose();
    }
  }

  async function* stream(req: ChatRequest, ctx: ChatContext): AsyncGenerator<ChatStreamEvent> {
    const guard = new CallGuard(ctx, id, timeoutMs);
    let res: Dispatcher.ResponseData | undefined;
    let finished = false;
    try {
      res = await send(req, true, guard, ctx);
      const type = String(res.headers['content-type'] ?? '');
      if (type.includes('application/json')) {
        // the upstream ignored `stream: true` (G56): one delta with the whole reply
        const parsed = parseCompletionJson(await readText(res, MAX_JSON_BYTES), req.model);
        if (parsed.content) yield { type: 'delta', content: parsed.content };
        finished = true;
        yield { type: 'done', finishReason: mapFinishReason(parsed.finish), usage: await completeUsage(parsed.usage, req.messages, parsed.content) };
        return;
      }
      guard.startStallTimer(stallTimeoutMs);
      yield { type: 'open' }; // a 2xx event stream: the caller's stream opens before the first token
      const parser = new SseParser();
      let content = '';
      let finish: unknown;
      let usage: ReturnType<typeof readUsage>;
      let sawDone = false;
      const handle = (data: string, event: string): ChatStreamEvent | undefined => {
        if (data === '[DONE]') {
          sawDone = true;
          return undefined;
        }
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw new AppError('upstream_error', `The chat upstream "${id}" sent a malformed stream chunk in the middle of the reply`, { retryable: true });
        }
        const o = json as { error?: unknown; choices?: unknown; usage?: unknown } | null;
        if (event === 'error' || (o !== null && typeof o === 'object' && o.error !== undefined && o.error !== null)) {
          const info = errorInfoOf(json);
          throw new AppError(
            'upstream_error',
            `The chat upstream "${id}" reported an error in the middle of the reply${info.message ? `: ${quote(info.message, apiKey)}` : ''}`,
            { retryable: true },
          );
        }
        const u = readUsage(o?.usage);
        if (u) usage = u;
        const choice = Array.isArray(o?.choices) ? (o.choices[0] as { delta?: { content?: unknown }; finish_reason?: unknown } | undefined) : undefined;
        if (!choice || typeof choice !== 'object') return undefined;
        if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason;
        const piece = choice.delta?.content;
        if (typeof piece === 'string' && piece !== '') {
          content += piece;
          return { type: 'delta', content: piece };
        }
        return undefined;
      };
      const done = async (): Promise<ChatStreamEvent> => {
        finished = true;
        guard.drain(DRAIN_MS); // nothing after the reply can time it out or fail it
        return { type: 'done', finishReason: mapFinishReason(finish), usage: await completeUsage(usage, req.messages, content) };
      };
      try {
        for await (const chunk of res.body) {
          if (finished) continue; // after [DONE]: read the rest so the connection can be reused
          guard.alive();
          for (const ev of parser.push(chunk as Buffer)) {
            const out = handle(ev.data, ev.event);
            if (out) yield out;
            if (sawDone) break;
          }
          if (sawDone) yield await done();
        }
        if (!finished) {
          for (const ev of parser.end()) {
            const out = handle(ev.data, ev.event);
            if (out) yield out;
            if (sawDone) break;
          }
        }
      } catch (err) {
        if (finished) return; // the reply was complete; a hiccup while draining does not matter
        throw guard.cut ?? (err instanceof AppError ? err : mapTransportError(err, id, 'stream'));
      }
      if (finished) return;
      if (guard.cut) throw guard.cut;
      // the body ended without [DONE]: complete if the upstream at least gave a finish_reason (G57)
      if (!sawDone && finish === undefined) {
        throw new AppError('upstream_error', `The chat upstream "${id}" ended the stream before the reply was complete`, { retryable: true });
      }
      yield await done();
    } catch (err) {
      throw guard.cut ?? err;
    } finally {
      guard.dispose();
      // the caller stopped early, or a failure: drop the upstream connection at once
      if (!finished) guard.abort(abortError());
    }
  }

  /** The models the key may use (G323): a list call of the OpenAI API, never a completion. */
  async function probe(signal: AbortSignal): Promise<ProbeResult> {
    const models = new URL(`${baseUrl}/models`);
    const answer = await upstreamCall(
      dispatcher,
      {
        origin: models.origin,
        path: `${models.pathname}${models.search}`,
        method: 'GET',
        headers: { accept: 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
      },
      { id, signal, timeoutMs: PROBE_TIMEOUT_MS, maxBytes: PROBE_MAX_BYTES },
    );
    return probeResult('GET /models', answer);
  }

  return {
    id,
    baseUrl,
    complete,
    stream,
    probe,
    close: async () => {
      await ownAgent?.close();
    },
  };
}

/** The answer's text, at most `limit` bytes (readBounded: the connection is dropped beyond it). */
function readText(res: Dispatcher.ResponseData, limit: number): Promise<string> {
  return readBounded(res, limit, () => new AppError('upstream_error', `The chat upstream's answer is larger than ${limit} bytes`));
}
