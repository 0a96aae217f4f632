/**
 * One call to the Gemini API: `POST {baseUrl}/models/{model}:generateContent` or
 * `:predictLongRunning` (JSON), `GET {baseUrl}/{operation name}`, the key in `x-goog-api-key`
 * (never in the URL, so it is in no log line), a bound on the whole call, the caller's signal
 * (whose reason the call rejects with). Failures below HTTP and timeouts are ChannelErrors; an
 * HTTP answer of any status is returned for errors.ts to classify. Answers are read up to
 * {@link MAX_ANSWER_BYTES} (inline 4K images are tens of MB of base64).
 */
import { Agent, type Dispatcher } from 'undici';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from '../relay/errors.js';
import { readBounded } from '../relay/http.js';
import { ChannelError } from '../types.js';

export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export interface GeminiHttpOptions {
  id: string;
  /** Up to the API version: `https://generativelanguage.googleapis.com/v1beta`. */
  baseUrl: URL;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  who: string;
  dispatcher?: Dispatcher | undefined;
}

export interface GeminiAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export class GeminiHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: GeminiHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : new Agent({ connect: { timeout: opts.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** The key header, for result downloads at this API's origin. */
  get keyHeaders(): Record<string, string> {
    return this.opts.apiKey ? { 'x-goog-api-key': this.opts.apiKey } : {};
  }

  /** `path` is below the base URL (`/models/veo-3.1:predictLongRunning`, `/models/veo-3.1/operations/abc`). */
  async call(method: 'GET' | 'POST', path: string, body: Record<string, unknown> | undefined, signal: AbortSignal, timeoutMs: number): Promise<GeminiAnswer> {
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
      const base = this.opts.baseUrl;
      const res = await this.dispatcher.request({
        origin: base.origin, path: `${base.pathname.replace(/\/+$/, '')}${path}`, method, signal: controller.signal,
        headers: { accept: 'application/json', ...(body && { 'content-type': 'application/json' }), ...this.keyHeaders },
        ...(body && { body: JSON.stringify(body) }),
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
