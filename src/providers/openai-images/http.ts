/**
 * One call to the Images API: `POST {baseUrl}/images/generations` (JSON) or `/images/edits`
 * (multipart), the bearer key, a bound on the whole call, the caller's signal (whose reason the
 * call rejects with). Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any
 * status is returned for errors.ts to classify. Answers are read up to {@link MAX_ANSWER_BYTES}
 * (base64 images: a 3840x2160 PNG is ~20 MB as base64).
 */
import { Agent, type Dispatcher, type FormData } from 'undici';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from '../relay/errors.js';
import { readBounded } from '../relay/http.js';
import { ChannelError } from '../types.js';

export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export interface ImagesHttpOptions {
  id: string;
  /** Up to the API version: `https://api.openai.com/v1`. */
  baseUrl: URL;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  /** Names the upstream in messages (never its address). */
  who: string;
  dispatcher?: Dispatcher | undefined;
}

export interface ImagesAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export class ImagesHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: ImagesHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : new Agent({ connect: { timeout: opts.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** POSTs `body` (an object as JSON, or a multipart form) to `path` below the base URL. */
  async post(path: '/images/generations' | '/images/edits', body: Record<string, unknown> | FormData, extraHeaders: Record<string, string>, signal: AbortSignal, timeoutMs: number): Promise<ImagesAnswer> {
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
    const json = !isForm(body);
    try {
      const base = this.opts.baseUrl;
      const res = await this.dispatcher.request({
        origin: base.origin, path: `${base.pathname.replace(/\/+$/, '')}${path}`, method: 'POST', signal: controller.signal,
        headers: {
          accept: 'application/json',
          ...(json && { 'content-type': 'application/json' }),
          ...(this.opts.apiKey && { authorization: `Bearer ${this.opts.apiKey}` }),
          ...extraHeaders,
        },
        body: json ? JSON.stringify(body) : body,
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

function isForm(body: Record<string, unknown> | FormData): body is FormData {
  return typeof (body as FormData).append === 'function' && typeof (body as FormData).getAll === 'function';
}
