/**
 * One call to the Gemini API: `POST {baseUrl}/models/{model}:generateContent` or
 * `:predictLongRunning` (JSON), `GET {baseUrl}/{operation name}`, the key in `x-goog-api-key`
 * (never in the URL, so it is in no log line), a bound on the whole call, the caller's signal
 * (whose reason the call rejects with). Failures below HTTP and timeouts are ChannelErrors; an
 * HTTP answer of any status is returned for errors.ts to classify. Answers are read up to
 * {@link MAX_ANSWER_BYTES} (inline 4K images are tens of MB of base64).
 */
import { UpstreamClient, type UpstreamAnswer, type UpstreamClientOptions } from '../toolkit/upstream-call.js';

export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export type GeminiHttpOptions = UpstreamClientOptions;

export type GeminiAnswer = UpstreamAnswer;

export class GeminiHttp extends UpstreamClient {
  /** The key header, for result downloads at this API's origin. */
  get keyHeaders(): Record<string, string> {
    return this.opts.apiKey ? { 'x-goog-api-key': this.opts.apiKey } : {};
  }

  /** `path` is below the base URL (`/models/veo-3.1:predictLongRunning`, `/models/veo-3.1/operations/abc`). */
  async call(method: 'GET' | 'POST', path: string, body: Record<string, unknown> | undefined, signal: AbortSignal, timeoutMs: number): Promise<GeminiAnswer> {
    return this.request(
      path,
      {
        method,
        headers: { accept: 'application/json', ...(body && { 'content-type': 'application/json' }), ...this.keyHeaders },
        ...(body && { body: JSON.stringify(body) }),
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }
}
