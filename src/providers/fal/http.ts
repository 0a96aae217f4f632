/**
 * One call to the fal queue API: a URL at the configured queue origin (the submit URL, or a
 * `status_url` / `response_url` / `cancel_url` fal returned), `Authorization: Key <key>`, a bound
 * on the whole call and the caller's signal (whose reason the call rejects with). Failures below
 * HTTP and timeouts are ChannelErrors; an HTTP answer of any status is returned for errors.ts to
 * classify. The key is sent to the queue's origin only: a URL elsewhere is refused before calling.
 */
import { UpstreamClient, type UpstreamAnswer, type UpstreamClientOptions } from '../toolkit/upstream-call.js';

/** Largest answer read: queue replies are JSON of a few KB, but a result answered with `sync_mode` holds its files as base64 data: URLs. */
const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

export type FalHttpOptions = UpstreamClientOptions;

export type FalAnswer = UpstreamAnswer;

export class FalHttp extends UpstreamClient {
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

  /** A GET of a public document (fal's webhook key set): no key is sent; answers up to 64 KiB. */
  async getPublic(url: URL, signal: AbortSignal, timeoutMs: number): Promise<FalAnswer> {
    return this.request(url, { method: 'GET', headers: { accept: 'application/json' } }, signal, timeoutMs, 64 * 1024);
  }

  async send(method: 'GET' | 'POST' | 'PUT', url: URL, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<FalAnswer> {
    const { apiKey } = this.opts;
    return this.request(
      url,
      {
        method,
        headers: {
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(apiKey && { authorization: `Key ${apiKey}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }
}
