/**
 * The `replicate` provider (G135-G137): any family, by a per-model input mapping
 * (models.ts). A start is one create: `POST /models/{owner}/{name}/predictions` for an official
 * model, `POST /predictions` with `version` otherwise, without `Prefer: wait` (a create never
 * blocks); the prediction id is the saved reference. A check is one `GET /predictions/{id}`; a
 * cancel `POST /predictions/{id}/cancel`. Prediction ids are logged with the task id. Replicate has
 * no idempotency key: the crash window of G137. Where the gateway takes provider callbacks, a
 * create asks for Replicate's `completed` webhook, which brings the next check forward (G159).
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import type { Dispatcher } from 'undici';
import { FAMILIES } from '../../contract/families.js';
import { scrubberFor } from '../toolkit/errors.js';
import type {
  CheckResult,
  MediaProvider,
  PollSeconds,
  CallContext,
  ProviderContext,
  ProviderJob,
  Refusal,
  RemoteFile,
  RequestedJob,
  StartResult,
} from '../types.js';
import type { UpstreamRef } from '../../contract/task-request.js';
import { UnrecoverableError } from '../types.js';
import { replicateCallbacks } from './callbacks.js';
import { checkFailure, createFailure, whoOf } from './errors.js';
import { ReplicateHttp } from './http.js';
import { predictionCallOf } from './mapping.js';
import type { ReplicateModelsSpec } from './models.js';
import { checkResultOf, predictionOf } from './reply.js';
import { tuningOf } from '../provider-tuning.js';
import { REPLICATE_DEFAULTS } from './defaults.js';

export interface ReplicateOptions {
  id: string;
  /** Up to the API version (default https://api.replicate.com/v1). */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged nor put in a message. */
  apiKey?: string | undefined;
  /** The input mapping of each model name a route gives this provider. */
  models: ReplicateModelsSpec;
  concurrency?: number | undefined;
  /** Bound on one call (create, check, cancel), ms (default 60 000). */
  timeoutMs?: number | undefined;
  /** TCP (+TLS) connect, ms (default 10 000). */
  connectTimeoutMs?: number | undefined;
  /** Seconds between checks (one number, or per family); default the contract's recommendation. */
  pollSeconds?: PollSeconds | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** What a started prediction keeps: what its file is. */
interface ReplicateRefData {
  kind: RemoteFile['kind'];
}

export function createReplicateProvider(options: ReplicateOptions): MediaProvider {
  const { id, apiKey, models } = options;
  const base = new URL(options.baseUrl ?? REPLICATE_DEFAULTS.baseUrl);
  const timeoutMs = options.timeoutMs ?? REPLICATE_DEFAULTS.timeoutMs;
  const who = whoOf(id);
  const http = new ReplicateHttp({
    id,
    who,
    baseUrl: base,
    apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? REPLICATE_DEFAULTS.connectTimeoutMs,
    dispatcher: options.dispatcher,
  });
  const scrub = scrubberFor(apiKey, [base]);
  const trusted = (url: string): boolean => {
    try {
      return new URL(url).origin === base.origin;
    } catch {
      return false;
    }
  };
  const predictionPath = (ref: UpstreamRef): string => `/predictions/${encodeURIComponent(ref.id)}`;

  function refuse(job: RequestedJob): Refusal | undefined {
    const call = predictionCallOf(models, job);
    return 'field' in call ? call : undefined;
  }

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const call = predictionCallOf(models, job, (ref) => ctx.mediaUrl(ref));
    if ('field' in call) throw new UnrecoverableError(`${call.field}: ${call.message}`, { param: call.field });
    const { spec, input } = call;
    // the end of the prediction is told to the callback URL too, where there is one (G159)
    const webhook = ctx.callbackUrl === undefined ? {} : { webhook: ctx.callbackUrl, webhook_events_filter: ['completed'] };
    const [path, body] =
      spec.model !== undefined ? [`/models/${spec.model}/predictions`, { input, ...webhook }] : ['/predictions', { version: spec.version, input, ...webhook }];
    const answer = await http.send('POST', path, body, ctx.signal, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      ctx.log.info({ taskId: job.taskId, provider: id, status: answer.status, upstreamModel: job.upstreamModel }, 'replicate refused the create');
      throw createFailure(id, answer.status, answer.headers, answer.text, scrub, call, job.upstreamModel);
    }
    const prediction = predictionOf(id, answer.text);
    ctx.log.info(
      { taskId: job.taskId, provider: id, predictionId: prediction.id, upstreamModel: job.upstreamModel, webhook: ctx.callbackUrl !== undefined },
      'replicate prediction created',
    );
    const data: ReplicateRefData = { kind: spec.output };
    return { state: 'started', ref: { id: prediction.id, data: { ...data } } };
  }

  async function check(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult> {
    const answer = await http.send('GET', predictionPath(ref), undefined, ctx.signal, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      const failure = checkFailure(id, answer.status, answer.headers, answer.text, scrub);
      if ('gone' in failure) return { state: 'failed', error: failure.gone };
      throw failure;
    }
    const prediction = predictionOf(id, answer.text);
    const kind = (ref.data as Partial<ReplicateRefData> | undefined)?.kind ?? (job.output.kind as RemoteFile['kind']);
    const result = checkResultOf(prediction, { id, kind, scrub, trusted });
    if (result.state !== 'pending')
      ctx.log.info({ taskId: job.taskId, provider: id, predictionId: ref.id, status: prediction.status }, 'replicate prediction ended');
    return result;
  }

  async function cancel(ref: UpstreamRef, _job: ProviderJob, ctx: CallContext): Promise<void> {
    const answer = await http.send('POST', `${predictionPath(ref)}/cancel`, {}, ctx.signal, timeoutMs);
    if (answer.status >= 200 && answer.status < 300) return;
    const failure = checkFailure(id, answer.status, answer.headers, answer.text, scrub);
    if ('gone' in failure) return; // nothing left to stop
    throw failure;
  }

  return {
    id,
    // the account the token belongs to: Replicate's status call for a token
    probe: async (signal) => probeResult('GET /account', await http.send('GET', '/account', undefined, signal, PROBE_TIMEOUT_MS)),
    capabilities: { families: [...FAMILIES] },
    ...tuningOf(options),
    refuse,
    start,
    check,
    cancel,
    callbacks: replicateCallbacks({ id, who, http, scrub }),
    close: () => http.close(),
  };
}
