/**
 * One JSON call to a relay's upstream: the configured prefix and path, the bearer key, an
 * `Idempotency-Key` where asked, a bound on the whole call (connect, headers and body), and the
 * caller's signal, whose reason the call rejects with. Failures below HTTP and timeouts are
 * ChannelErrors (errors.ts); an HTTP answer of any status is returned for the caller to classify.
 */
import type { Agent, Dispatcher } from 'undici';
import { upstreamAgent, upstreamCall, type UpstreamAnswer } from '../toolkit/upstream-call.js';
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

export type RelayAnswer = UpstreamAnswer;

/** Largest answer read from a media call (task objects are a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

export class RelayHttp {
  readonly dispatcher: Dispatcher;
  private readonly ownAgent: Agent | undefined;

  constructor(private readonly opts: RelayHttpOptions) {
    this.ownAgent = opts.dispatcher ? undefined : upstreamAgent(opts.connectTimeoutMs);
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
    const { origin, path } = this.target(call.endpoint);
    return upstreamCall(
      this.dispatcher,
      {
        origin,
        path,
        method: call.method,
        headers: this.headers(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }),
        ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      },
      { id: this.opts.id, signal, timeoutMs, maxBytes: MAX_ANSWER_BYTES },
    );
  }

  async close(): Promise<void> {
    await this.ownAgent?.close();
  }
}
