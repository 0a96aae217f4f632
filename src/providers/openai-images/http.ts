/**
 * One call to the Images API: `POST {baseUrl}/images/generations` (JSON) or `/images/edits`
 * (multipart), the bearer key, a bound on the whole call, the caller's signal (whose reason the
 * call rejects with). Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any
 * status is returned for errors.ts to classify. Answers are read up to {@link MAX_ANSWER_BYTES}
 * (base64 images: a 3840x2160 PNG is ~20 MB as base64).
 */
import type { Agent, Dispatcher, FormData } from 'undici';
import { upstreamAgent, upstreamCall, type UpstreamAnswer } from '../upstream-call.js';

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

export type ImagesAnswer = UpstreamAnswer;

export class ImagesHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: ImagesHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : upstreamAgent(opts.connectTimeoutMs);
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** POSTs `body` (an object as JSON, or a multipart form) to `path` below the base URL. */
  async post(path: '/images/generations' | '/images/edits', body: Record<string, unknown> | FormData, extraHeaders: Record<string, string>, signal: AbortSignal, timeoutMs: number): Promise<ImagesAnswer> {
    const { id, who, baseUrl, apiKey } = this.opts;
    const json = !isForm(body);
    return upstreamCall(this.dispatcher, {
      origin: baseUrl.origin, path: `${baseUrl.pathname.replace(/\/+$/, '')}${path}`, method: 'POST',
      headers: {
        accept: 'application/json',
        ...(json && { 'content-type': 'application/json' }),
        ...(apiKey && { authorization: `Bearer ${apiKey}` }),
        ...extraHeaders,
      },
      body: json ? JSON.stringify(body) : body,
    }, { id, who, signal, timeoutMs, maxBytes: MAX_ANSWER_BYTES });
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}

function isForm(body: Record<string, unknown> | FormData): body is FormData {
  return typeof (body as FormData).append === 'function' && typeof (body as FormData).getAll === 'function';
}
