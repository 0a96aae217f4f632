/**
 * One HTTP call to a provider's upstream, for every provider that speaks HTTP: a bound on the whole
 * call (connect, headers and body), the caller's signal (whose reason the call rejects with, also
 * before anything was sent), the answer read whole up to a size (an answer other than 2xx is cut
 * there, its status is what counts). Failures below HTTP and timeouts
 * are ChannelErrors naming the upstream only as `who` (toolkit/errors.ts, G99); an HTTP answer of any
 * status is returned for the provider to classify.
 */
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../../http/undici.js';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from './errors.js';
import { ChannelError, UnexpectedReply } from '../types.js';
import { inSpan, SpanKind, upstreamRequestId } from '../../tracing/tracing.js';

export interface UpstreamAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export interface UpstreamCallOptions {
  /** The provider's id, and how messages name it (never its address). */
  id: string;
  who?: string | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  /** Largest answer read; a larger 2xx one is a malformed reply, of another status cut there (the connection is dropped either way). */
  maxBytes: number;
}

/** A connection pool for one upstream: the call's own timer bounds each call, so undici's are off. */
export function upstreamAgent(connectTimeoutMs: number): Agent {
  return new (undici().Agent)({ connect: { timeout: connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
}

/**
 * Makes the call and reads the whole answer (see the file's comment for what it rejects with), in
 * a span naming the provider, the method, the status and the upstream's id of the request (G228);
 * never the address or the path, which may hold credentials or a caller's data.
 */
export function upstreamCall(dispatcher: Dispatcher, request: Omit<Dispatcher.RequestOptions, 'signal'>, opts: UpstreamCallOptions): Promise<UpstreamAnswer> {
  return inSpan(`${request.method} ${opts.id}`, SpanKind.CLIENT, { 'http.request.method': request.method, 'mediagate.provider': opts.id }, async (span) => {
    const answer = await callOnce(dispatcher, request, opts);
    span.setAttribute('http.response.status_code', answer.status);
    const upstreamId = upstreamRequestId(answer.headers);
    if (upstreamId !== undefined) span.setAttribute('mediagate.upstream.request_id', upstreamId);
    return answer;
  });
}

async function callOnce(dispatcher: Dispatcher, request: Omit<Dispatcher.RequestOptions, 'signal'>, opts: UpstreamCallOptions): Promise<UpstreamAnswer> {
  const { id, who, signal, timeoutMs, maxBytes } = opts;
  signal.throwIfAborted();
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(timeoutFailure(id, timeoutMs, who));
  }, timeoutMs);
  try {
    const res = await dispatcher.request({ ...request, signal: controller.signal });
    // a 2xx answer larger than the bound cannot be read (G272); another status says what it is by
    // itself (a proxy's 502 page, a 429): its first bytes are enough to quote from
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const text = ok
      ? await readBounded(res, maxBytes, () => malformedReply(id, `an answer larger than ${maxBytes} bytes`, who))
      : await readStart(res, maxBytes);
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (timedOut) throw timeoutFailure(id, timeoutMs, who);
    if (err instanceof ChannelError || err instanceof UnexpectedReply) throw err;
    throw transportFailure(id, err, who);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** The body as text, at most `limit` bytes (then the connection is dropped and `tooLarge()` thrown). */
export async function readBounded(res: Dispatcher.ResponseData, limit: number, tooLarge: () => Error): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) {
      res.body.destroy();
      throw tooLarge();
    }
    parts.push(b);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * The body's first `limit` bytes as text (the rest is not read: the connection is dropped). For an
 * answer other than 2xx, which says what it is by its status whatever its size (a proxy's 503 page).
 */
export async function readStart(res: Dispatcher.ResponseData, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const b = chunk as Buffer;
    parts.push(size + b.length > limit ? b.subarray(0, limit - size) : b);
    size += b.length;
    if (size >= limit) {
      res.body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8');
}

export interface UpstreamClientOptions {
  id: string;
  /** The API's address up to its version (`https://api.openai.com/v1`); calls name paths below it. */
  baseUrl: URL;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  /** Names the upstream in messages (never its address). */
  who: string;
  /** A pool to use instead of the client's own (tests). */
  dispatcher?: Dispatcher | undefined;
}

/** What every native provider's API client shares: its connection pool and calls below its base URL. */
export class UpstreamClient {
  protected readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(protected readonly opts: UpstreamClientOptions) {
    this.ownAgent = opts.dispatcher ? undefined : upstreamAgent(opts.connectTimeoutMs);
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** A call to `path` below the base URL (or to a whole `URL` the API returned). */
  protected request(
    target: string | URL,
    request: Omit<Dispatcher.RequestOptions, 'signal' | 'origin' | 'path'>,
    signal: AbortSignal,
    timeoutMs: number,
    maxBytes: number,
  ): Promise<UpstreamAnswer> {
    const base = this.opts.baseUrl;
    const at =
      typeof target === 'string'
        ? { origin: base.origin, path: `${base.pathname.replace(/\/+$/, '')}${target}` }
        : { origin: target.origin, path: `${target.pathname}${target.search}` };
    return upstreamCall(this.dispatcher, { ...request, ...at }, { id: this.opts.id, who: this.opts.who, signal, timeoutMs, maxBytes });
  }

  /** A GET of `path` below the base URL with `headers`, for a probe (G323): read up to 256 KiB. */
  probeGet(path: string, headers: Record<string, string>, signal: AbortSignal, timeoutMs: number): Promise<UpstreamAnswer> {
    return this.request(path, { method: 'GET', headers: { accept: 'application/json', ...headers } }, signal, timeoutMs, 256 * 1024);
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}
