/**
 * One JSON call to a relay's upstream: the configured prefix and path, the bearer key, an
 * `Idempotency-Key` where asked, a bound on the whole call (connect, headers and body), and the
 * caller's signal, whose reason the call rejects with. Failures below HTTP and timeouts are
 * ChannelErrors (errors.ts); an HTTP answer of any status is returned for the caller to classify.
 */
import { Agent, type Dispatcher } from 'undici';
import { ChannelError } from '../types.js';
import { malformedReply, timeoutFailure, transportFailure, type Headers } from './errors.js';
import { target, type Bases, type Endpoint } from './paths.js';

export interface RelayHttpOptions {
  id: string;
  bases: Bases;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  dispatcher?: Dispatcher | undefined;
}

export interface RelayCall {
  endpoint: Endpoint;
  method: 'GET' | 'POST';
  body?: unknown;
  idempotencyKey?: string;
}

export interface RelayAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** Largest answer read from a media call (task objects are a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

export class RelayHttp {
  readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: RelayHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : new Agent({
      connect: { timeout: opts.connectTimeoutMs },
      // the call's own timer bounds it (send); undici's would only duplicate it
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
    });
    this.dispatcher = opts.dispatcher ?? this.ownAgent!;
  }

  /** Headers of every call: JSON both ways, the key when configured. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(this.opts.apiKey && { authorization: `Bearer ${this.opts.apiKey}` }),
      ...extra,
    };
  }

  target(endpoint: Endpoint): { origin: string; path: string } {
    return target(this.opts.bases, endpoint);
  }

  /**
   * Makes the call and reads the whole answer. Rejects with `signal`'s reason when it aborts
   * (also before anything was sent), a ChannelError when the call fails below HTTP or takes
   * longer than `timeoutMs`.
   */
  async send(call: RelayCall, signal: AbortSignal, timeoutMs: number): Promise<RelayAnswer> {
    signal.throwIfAborted();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(timeoutFailure(this.opts.id, timeoutMs));
    }, timeoutMs);
    try {
      const { origin, path } = this.target(call.endpoint);
      const res = await this.dispatcher.request({
        origin, path, method: call.method, signal: controller.signal,
        headers: this.headers(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }),
        ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      });
      const text = await readBounded(res, MAX_ANSWER_BYTES, () => malformedReply(this.opts.id, `an answer larger than ${MAX_ANSWER_BYTES} bytes`));
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (timedOut) throw timeoutFailure(this.opts.id, timeoutMs);
      if (err instanceof ChannelError) throw err;
      throw transportFailure(this.opts.id, err);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}

/** The body as text, at most `limit` bytes (then the connection is dropped and `tooLarge()` thrown). */
export async function readBounded(res: Dispatcher.ResponseData, limit: number, tooLarge: () => Error): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) {
      res.body.destroy();
      throw tooLarge();
    }
    parts.push(b);
  }
  return Buffer.concat(parts).toString('utf8');
}
