/**
 * One call to the Images API: `POST {baseUrl}/images/generations` (JSON) or `/images/edits`
 * (multipart), the bearer key, a bound on the whole call, the caller's signal (whose reason the
 * call rejects with). Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any
 * status is returned for errors.ts to classify. Answers are read up to {@link MAX_ANSWER_BYTES}
 * (base64 images: a 3840x2160 PNG is ~20 MB as base64).
 */
import type { FormData } from 'undici';
import { UpstreamClient, type UpstreamAnswer, type UpstreamClientOptions } from '../toolkit/upstream-call.js';

export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export type ImagesHttpOptions = UpstreamClientOptions;

export type ImagesAnswer = UpstreamAnswer;

export class ImagesHttp extends UpstreamClient {
  /** POSTs `body` (an object as JSON, or a multipart form) to `path` below the base URL. */
  async post(
    path: '/images/generations' | '/images/edits',
    body: Record<string, unknown> | FormData,
    extraHeaders: Record<string, string>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ImagesAnswer> {
    const { apiKey } = this.opts;
    const json = !isForm(body);
    return this.request(
      path,
      {
        method: 'POST',
        headers: {
          accept: 'application/json',
          ...(json && { 'content-type': 'application/json' }),
          ...(apiKey && { authorization: `Bearer ${apiKey}` }),
          ...extraHeaders,
        },
        body: json ? JSON.stringify(body) : body,
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }
}

function isForm(body: Record<string, unknown> | FormData): body is FormData {
  return typeof (body as FormData).append === 'function' && typeof (body as FormData).getAll === 'function';
}
