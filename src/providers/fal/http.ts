/**
 * One call to the fal queue API: a URL at the configured queue origin (the submit URL, or a
 * `status_url` / `response_url` / `cancel_url` fal returned), `Authorization: Key <key>`, a bound
 * on the whole call and the caller's signal (whose reason the call rejects with). Failures below
 * HTTP and timeouts are ChannelErrors; an HTTP answer of any status is returned for errors.ts to
 * classify. The key is sent to the queue's origin only: a URL elsewhere is refused before calling.
 */
import { Agent, type Dispatcher } from 'undici';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from '../relay/errors.js';
import { readBounded } from '../relay/http.js';
import { ChannelError } from '../types.js';

/** Largest answer read (queue replies and model results are JSON of a few KB). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export interface FalHttpOptions {
  id: string;
  /** The queue URL: `https://queue.fal.run`. */
  baseUrl: URL;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  who: string;
  dispatcher?: Dispatcher | undefined;
}

export interface FalAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export class FalHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: FalHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : new Agent({ connect: { timeout: opts.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** The URL of a model's submit: `{queue}/{model id}`. */
  submitUrl(model: string): URL {
    const base = this.opts.baseUrl;
    return new URL(`${base.origin}${base.pathname.replace(/\/+$/, '')}/${model}`);
  }

  /** A URL fal returned, if it is at the queue's origin (else it is not called: the key would go elsewhere). */
  queueUrl(raw: unknown): URL | undefined {
    if (typeof raw !== 'string') return undefined;
    try {
      const u = new URL(raw);
      return u.origin === this.opts.baseUrl.origin ? u : undefined;
    } catch {
      return undefined;
    }
  }

  async send(method: 'GET' | 'POST' | 'PUT', url: URL, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<FalAnswer> {
    signal.throwIfAborted();
    const { id, who } = this.opts;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(timeoutFailure(id, timeoutMs, who));
    }, timeoutMs);
    try {
      const res = await this.dispatcher.request({
        origin: url.origin, path: `${url.pathname}${url.search}`, method, signal: controller.signal,
        headers: {
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(this.opts.apiKey && { authorization: `Key ${this.opts.apiKey}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await readBounded(res, MAX_ANSWER_BYTES, () => malformedReply(id, `an answer larger than ${MAX_ANSWER_BYTES} bytes`, who));
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (timedOut) throw timeoutFailure(id, timeoutMs, who);
      if (err instanceof ChannelError) throw err;
      throw transportFailure(id, err, who);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}
