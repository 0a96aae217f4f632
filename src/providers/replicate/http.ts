/**
 * One call to the Replicate API below `baseUrl` (`https://api.replicate.com/v1`): JSON both ways,
 * the bearer token, a bound on the whole call, the caller's signal (whose reason the call rejects
 * with). Never `Prefer: wait`: a create answers at once with the prediction, and the engine checks
 * on it later. Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any status is
 * returned for errors.ts to classify. Answers are read up to 1 MB (a prediction with its logs).
 */
import type { Agent, Dispatcher } from 'undici';
import { upstreamAgent, upstreamCall, type UpstreamAnswer } from '../upstream-call.js';

const MAX_ANSWER_BYTES = 1024 * 1024;

export interface ReplicateHttpOptions {
  id: string;
  baseUrl: URL;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  /** Names the upstream in messages (never its address). */
  who: string;
  dispatcher?: Dispatcher | undefined;
}

export type ReplicateAnswer = UpstreamAnswer;

export class ReplicateHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: ReplicateHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : upstreamAgent(opts.connectTimeoutMs);
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** `path` below the base URL (`/predictions/abc`), with a JSON body for a POST. */
  async send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<ReplicateAnswer> {
    const { id, who, baseUrl, apiKey } = this.opts;
    return upstreamCall(this.dispatcher, {
      origin: baseUrl.origin, path: `${baseUrl.pathname.replace(/\/+$/, '')}${path}`, method,
      headers: {
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(apiKey && { authorization: `Bearer ${apiKey}` }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }, { id, who, signal, timeoutMs, maxBytes: MAX_ANSWER_BYTES });
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}
