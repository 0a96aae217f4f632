/**
 * One call to the Replicate API below `baseUrl` (`https://api.replicate.com/v1`): JSON both ways,
 * the bearer token, a bound on the whole call, the caller's signal (whose reason the call rejects
 * with). Never `Prefer: wait`: a create answers at once with the prediction, and the engine checks
 * on it later. Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any status is
 * returned for errors.ts to classify. Answers are read up to 64 MB (a prediction with its logs, and
 * any output file inline as a data: URL).
 */
import { UpstreamClient, type UpstreamAnswer, type UpstreamClientOptions } from '../toolkit/upstream-call.js';

/** Largest answer read: a prediction with its logs, and its output files where they come inline as data: URLs. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export type ReplicateHttpOptions = UpstreamClientOptions;

export type ReplicateAnswer = UpstreamAnswer;

export class ReplicateHttp extends UpstreamClient {
  /** `path` below the base URL (`/predictions/abc`), with a JSON body for a POST. */
  async send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<ReplicateAnswer> {
    const { apiKey } = this.opts;
    return this.request(
      path,
      {
        method,
        headers: {
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(apiKey && { authorization: `Bearer ${apiKey}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }
}
