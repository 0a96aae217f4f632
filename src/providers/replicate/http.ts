/**
 * One call to the Replicate API below `baseUrl` (`https://api.replicate.com/v1`): JSON both ways,
 * the bearer token, a bound on the whole call, the caller's signal (whose reason the call rejects
 * with). Never `Prefer: wait`: a create answers at once with the prediction, and the engine checks
 * on it later. Failures below HTTP and timeouts are ChannelErrors; an HTTP answer of any status is
 * returned for errors.ts to classify. Answers are read up to 1 MB (a prediction with its logs).
 */
import { Agent, type Dispatcher } from 'undici';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from '../relay/errors.js';
import { readBounded } from '../relay/http.js';
import { ChannelError } from '../types.js';

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

export interface ReplicateAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export class ReplicateHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: ReplicateHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : new Agent({ connect: { timeout: opts.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** `path` below the base URL (`/predictions/abc`), with a JSON body for a POST. */
  async send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<ReplicateAnswer> {
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
        headers: {
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(this.opts.apiKey && { authorization: `Bearer ${this.opts.apiKey}` }),
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
