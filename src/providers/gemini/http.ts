/**
 * One call to the Gemini API: `POST {baseUrl}/models/{model}:generateContent` or
 * `:predictLongRunning` (JSON), `GET {baseUrl}/{operation name}`, the key in `x-goog-api-key`
 * (never in the URL, so it is in no log line), a bound on the whole call, the caller's signal
 * (whose reason the call rejects with). Failures below HTTP and timeouts are ChannelErrors; an
 * HTTP answer of any status is returned for errors.ts to classify. Answers are read up to
 * {@link MAX_ANSWER_BYTES} (inline 4K images are tens of MB of base64).
 */
import type { Agent, Dispatcher } from 'undici';
import { upstreamAgent, upstreamCall, type UpstreamAnswer } from '../upstream-call.js';

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

export type GeminiAnswer = UpstreamAnswer;

export class GeminiHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: GeminiHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : upstreamAgent(opts.connectTimeoutMs);
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** The key header, for result downloads at this API's origin. */
  get keyHeaders(): Record<string, string> {
    return this.opts.apiKey ? { 'x-goog-api-key': this.opts.apiKey } : {};
  }

  /** `path` is below the base URL (`/models/veo-3.1:predictLongRunning`, `/models/veo-3.1/operations/abc`). */
  async call(method: 'GET' | 'POST', path: string, body: Record<string, unknown> | undefined, signal: AbortSignal, timeoutMs: number): Promise<GeminiAnswer> {
    const { id, who, baseUrl } = this.opts;
    return upstreamCall(this.dispatcher, {
      origin: baseUrl.origin, path: `${baseUrl.pathname.replace(/\/+$/, '')}${path}`, method,
      headers: { accept: 'application/json', ...(body && { 'content-type': 'application/json' }), ...this.keyHeaders },
      ...(body && { body: JSON.stringify(body) }),
    }, { id, who, signal, timeoutMs, maxBytes: MAX_ANSWER_BYTES });
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}
