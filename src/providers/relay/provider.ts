/**
 * The `relay` provider: forwards every family to an upstream that speaks this same interface (a
 * service with the same API, or another mediagate), each to its path under `baseUrl`,
 * `powerBaseUrl` or `apiBaseUrl` (G94-G99). A create is one POST carrying
 * `Idempotency-Key: <task id>[.<generation>]`; a check is one GET of the task; a motion cancel is
 * passed on; chat goes to `/v1/chat/completions`, streamed or not.
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import type { Dispatcher } from 'undici';
import type { CheckResult, PollSeconds, Provider, CallContext, ProviderContext, ProviderJob, StartResult } from '../types.js';
import type { UpstreamRef } from '../../contract/task-request.js';
import { relayChat } from './chat.js';
import { createBody } from './create-body.js';
import { brokeAfterSending, createFailure, queryFailure, scrubberFor } from '../toolkit/errors.js';
import { idempotencyKeyOf } from '../toolkit/idempotency-key.js';
import { RelayHttp, type RelayAnswer, type RelayCall } from './http.js';
import { cancelEndpoint, createEndpoint, parseBase, queryEndpoint, type BaseName, type Bases, type Endpoint } from './paths.js';
import { checkResultOf, createdOf, parseJson } from './replies.js';
import { tuningOf } from '../provider-tuning.js';

export interface RelayProviderOptions {
  /** Provider (channel) id; named in error messages instead of the upstream's address. */
  id: string;
  /** `{base_url}` of the upstream, e.g. `https://api.example.com`. */
  baseUrl: string;
  /** `{power_base_url}` (motion; clip Form A queries); default `baseUrl`. */
  powerBaseUrl?: string | undefined;
  /** `{api_base_url}` (clip and reel Form A creates, reel queries); default `baseUrl`. */
  apiBaseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged nor put in a message. */
  apiKey?: string | undefined;
  /** Creates and checks in flight at this upstream from one process (default: the worker's concurrency). */
  concurrency?: number | undefined;
  /** Bound on one media call (create, check, cancel), ms (default 60 000). */
  timeoutMs?: number | undefined;
  /** TCP (+TLS) connect, ms (default 10 000). */
  connectTimeoutMs?: number | undefined;
  /** Seconds between checks (one number, or per family); default the contract's recommendation. */
  pollSeconds?: PollSeconds | undefined;
  /** Bound on one chat call, a whole stream included, ms (default 120 000). */
  chatTimeoutMs?: number | undefined;
  /** Longest silence inside a chat stream, ms (default 30 000, at most chatTimeoutMs). */
  chatStallTimeoutMs?: number | undefined;
  /** A dispatcher to use instead of the provider's own keep-alive pool (tests, proxies). */
  dispatcher?: Dispatcher | undefined;
}

export const RELAY_DEFAULTS = { timeoutMs: 60_000, connectTimeoutMs: 10_000, chatTimeoutMs: 120_000, chatStallTimeoutMs: 30_000 } as const;

/** What a started generation keeps (plain JSON on the task): enough to check it and cancel it. */
export interface RelayRefData {
  family: ProviderJob['family'];
  form: ProviderJob['form'];
  /** The query call: prefix and path below it (not a whole URL, so a changed address is followed). */
  query: Endpoint;
}

function positive(setting: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`relay provider: ${setting} must be a positive number of milliseconds`);
  return value;
}

export function createRelayProvider(options: RelayProviderOptions): Provider {
  const { id, apiKey } = options;
  const bases: Bases = {
    base: parseBase(`relay provider "${id}": baseUrl`, options.baseUrl),
    power: parseBase(`relay provider "${id}": powerBaseUrl`, options.powerBaseUrl ?? options.baseUrl),
    api: parseBase(`relay provider "${id}": apiBaseUrl`, options.apiBaseUrl ?? options.baseUrl),
  };
  const timeoutMs = positive('timeoutMs', options.timeoutMs, RELAY_DEFAULTS.timeoutMs);
  const connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, RELAY_DEFAULTS.connectTimeoutMs);
  const chatTimeoutMs = positive('chatTimeoutMs', options.chatTimeoutMs, RELAY_DEFAULTS.chatTimeoutMs);
  const chatStallTimeoutMs = Math.min(chatTimeoutMs, positive('chatStallTimeoutMs', options.chatStallTimeoutMs, RELAY_DEFAULTS.chatStallTimeoutMs));
  const http = new RelayHttp({ id, bases, apiKey, connectTimeoutMs, dispatcher: options.dispatcher });
  const scrub = scrubberFor(apiKey, Object.values(bases));
  const origins = new Set(Object.values(bases).map((u) => u.origin));
  const trusted = (url: string): boolean => {
    try {
      return origins.has(new URL(url).origin);
    } catch {
      return false;
    }
  };

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const create: RelayCall = {
      endpoint: createEndpoint(job.family, job.form),
      method: 'POST',
      body: createBody(job, (ref) => ctx.mediaUrl(ref)),
      idempotencyKey: idempotencyKeyOf(job),
    };
    let answer: RelayAnswer;
    try {
      answer = await http.send(create, ctx.signal, timeoutMs);
    } catch (err) {
      // The upstream may have taken the create before the connection broke: asked once more under
      // the same key and body, it answers that generation (or makes the one it missed), rather
      // than the task moving to another channel and this one running unchecked (G124).
      if (!brokeAfterSending(err)) throw err;
      ctx.log.warn({ channel: id, err: (err as Error).message }, "the create's connection broke; sending it again under the same key");
      answer = await http.send(create, ctx.signal, timeoutMs);
    }
    if (answer.status < 200 || answer.status >= 300) throw createFailure(id, answer.status, answer.headers, answer.text, scrub);
    const created = createdOf(id, job.family, parseJson(id, answer.text), answer.headers, scrub);
    const data: RelayRefData = { family: job.family, form: job.form, query: queryEndpoint(job.family, job.form, created.upstreamId) };
    // a generation just created is not finished, whatever progress its create reported (G96)
    const progress = created.progress === undefined ? undefined : Math.min(99, Math.floor(created.progress));
    return { state: 'started', ref: { id: created.upstreamId, data: { ...data } }, ...(progress !== undefined && { progress }) };
  }

  /** The query of a started generation: as saved, else worked out from the job (references saved by an older version). */
  function queryOf(ref: UpstreamRef, job: ProviderJob): Endpoint {
    const q = (ref.data as Partial<RelayRefData> | undefined)?.query;
    const known: readonly BaseName[] = ['base', 'power', 'api'];
    if (q && known.includes(q.base) && typeof q.path === 'string' && q.path.startsWith('/')) return q;
    return queryEndpoint(job.family, job.form, ref.id);
  }

  async function check(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult> {
    const answer = await http.send({ endpoint: queryOf(ref, job), method: 'GET' }, ctx.signal, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      const failure = queryFailure(id, answer.status, answer.headers, answer.text, scrub);
      if ('gone' in failure) return { state: 'failed', error: failure.gone };
      throw failure;
    }
    return checkResultOf(parseJson(id, answer.text), answer.headers, { relayId: id, job, trusted, scrub });
  }

  async function cancel(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<void> {
    const endpoint = cancelEndpoint(job.family, ref.id);
    if (!endpoint) return; // the contract cancels motion tasks only
    const answer = await http.send({ endpoint, method: 'POST', body: {} }, ctx.signal, timeoutMs);
    // 409: already finished there; 404/410: gone there. Either way nothing is left to stop.
    if ((answer.status >= 200 && answer.status < 300) || answer.status === 409) return;
    const failure = queryFailure(id, answer.status, answer.headers, answer.text, scrub);
    if ('gone' in failure) return;
    throw failure;
  }

  return {
    id,
    // an upstream mediagate answers a repeated create of the same Idempotency-Key with the same task (G71, G453)
    idempotentCreates: true,
    // the key's own account: a status call of the interface (GET /v1/account)
    probe: async (signal) =>
      probeResult('GET /v1/account', await http.send({ endpoint: { base: 'base', path: '/v1/account' }, method: 'GET' }, signal, PROBE_TIMEOUT_MS)),
    capabilities: { families: ['pic', 'clip', 'reel', 'motion', 'videos', 'model-center', 'chat'] },
    ...tuningOf(options),
    start,
    check,
    cancel,
    chat: relayChat({ id, http, scrub, timeoutMs: chatTimeoutMs, stallTimeoutMs: chatStallTimeoutMs }),
    close: () => http.close(),
  };
}
