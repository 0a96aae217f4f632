/**
 * The `fal` provider (G140-G144): any family, made by fal models through the queue
 * API. A start is one `POST {queue}/{model id}` with the input the model's mapping makes of the
 * request (models.ts, mapping.ts); fal answers a request id and the URLs of its status, result
 * and cancel, which are saved as the reference and used as given (they drop the model's
 * sub-path). A check is one `GET status_url` and, once it says COMPLETED, one `GET response_url`
 * (where the model's own errors show); the result's files are fal CDN URLs the engine re-hosts at
 * once. Cancel is `PUT cancel_url`. Each answer's `x-fal-request-id` is logged with the task id.
 * Where the gateway takes provider callbacks, a submit names the callback URL as `fal_webhook`;
 * fal's notice brings the next check forward (G160).
 */
import { PROBE_TIMEOUT_MS, probeResult } from '../probe.js';
import type { Dispatcher } from 'undici';
import { scrubberFor } from '../toolkit/errors.js';
import type { CheckResult, MediaProvider, PollSeconds, CallContext, ProviderContext, ProviderJob, Refusal, RequestedJob, StartResult } from '../types.js';
import type { UpstreamRef } from '../../contract/task-request.js';
import { ChannelError, UnexpectedReply, UnrecoverableError } from '../types.js';
import { falCallbacks } from './callbacks.js';
import { resultFailure, statusFailure, submitFailure, whoOf } from './errors.js';
import { FalHttp, type FalAnswer } from './http.js';
import { falCallOf, mappingOf } from './mapping.js';
import type { FalModels } from './models.js';
import { queueProgress } from '../queue-progress.js';
import { filesOf, parseJson, statusOf, submittedOf, type FalRefData } from './reply.js';
import { tuningOf } from '../provider-tuning.js';
import { FAMILIES } from '../../contract/families.js';
import { FAL_DEFAULTS } from './defaults.js';

export interface FalOptions {
  id: string;
  /** The queue URL (default https://queue.fal.run). */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Key <apiKey>`; never logged nor put in a message. */
  apiKey?: string | undefined;
  /** The input mapping of each fal model id this provider serves. */
  models: FalModels;
  concurrency?: number | undefined;
  /** Bound on one call (submit, status, result, cancel), ms (default 60 000). */
  timeoutMs?: number | undefined;
  /** TCP (+TLS) connect, ms (default 10 000). */
  connectTimeoutMs?: number | undefined;
  pollSeconds?: PollSeconds | undefined;
  /** Where fal publishes the public keys of its webhook signatures (default fal's own, FAL_JWKS_URL). */
  jwksUrl?: string | undefined;
  dispatcher?: Dispatcher | undefined;
}

const headerOf = (a: FalAnswer, name: string): string | undefined => {
  const v = a.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function createFalProvider(options: FalOptions): MediaProvider {
  const { id, apiKey, models } = options;
  const base = new URL(options.baseUrl ?? FAL_DEFAULTS.baseUrl);
  const timeoutMs = options.timeoutMs ?? FAL_DEFAULTS.timeoutMs;
  const who = whoOf(id);
  const http = new FalHttp({
    id,
    who,
    baseUrl: base,
    apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? FAL_DEFAULTS.connectTimeoutMs,
    dispatcher: options.dispatcher,
  });
  const scrub = scrubberFor(apiKey, [base]);

  function refuse(job: RequestedJob): Refusal | undefined {
    const call = falCallOf(models, job);
    return 'field' in call ? call : undefined;
  }

  function refData(ref: UpstreamRef): { status: URL; response: URL; cancel: URL } {
    const d = (ref.data ?? {}) as Partial<FalRefData>;
    const [status, response, cancel] = [d.statusUrl, d.responseUrl, d.cancelUrl].map((u) => http.queueUrl(u));
    // a reference saved against another queue address (providers.json changed): it cannot be followed
    if (!status || !response || !cancel)
      throw new UnrecoverableError(`${who} cannot follow request ${ref.id}: its saved URLs are not at the configured queue address`);
    return { status, response, cancel };
  }

  async function start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
    ctx.signal.throwIfAborted();
    const call = falCallOf(models, job, (ref) => ctx.mediaUrl(ref));
    if ('field' in call) throw new UnrecoverableError(`${call.field}: ${call.message}`, { param: call.field });
    const url = http.submitUrl(call.model);
    // the end of the request is told to the callback URL too, where there is one (G160)
    if (ctx.callbackUrl !== undefined) url.searchParams.set('fal_webhook', ctx.callbackUrl);
    const answer = await http.send('POST', url, call.input, ctx.signal, timeoutMs);
    const requestId = headerOf(answer, 'x-fal-request-id');
    ctx.log.info(
      {
        taskId: job.taskId,
        provider: id,
        upstreamRequestId: requestId,
        status: answer.status,
        upstreamModel: call.model,
        webhook: ctx.callbackUrl !== undefined,
      },
      'fal submit answered',
    );
    if (answer.status < 200 || answer.status >= 300) throw submitFailure(id, answer.status, answer.headers, answer.text, scrub, call.model);
    const json = parseJson(id, who, answer.text);
    const submitted = submittedOf(id, who, http, json);
    const position = (json as { queue_position?: unknown } | null)?.queue_position;
    return {
      state: 'started',
      ref: { id: submitted.requestId, data: { ...submitted.data, fieldOfInput: call.fieldOfInput } },
      progress: queueProgress(typeof position === 'number' ? position : undefined),
    };
  }

  async function check(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult> {
    const urls = refData(ref);
    const answer = await http.send('GET', urls.status, undefined, ctx.signal, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) {
      const failure = statusFailure(id, answer.status, answer.headers, answer.text, scrub);
      if ('gone' in failure) return { state: 'failed', error: failure.gone };
      throw failure;
    }
    const status = statusOf(id, who, parseJson(id, who, answer.text));
    if (status.status === 'IN_QUEUE') return { state: 'pending', progress: queueProgress(status.queuePosition) };
    if (status.status === 'IN_PROGRESS') return { state: 'pending' }; // the engine's time estimate (G129)
    const result = await http.send('GET', urls.response, undefined, ctx.signal, timeoutMs);
    ctx.log.info(
      { taskId: job.taskId, provider: id, upstreamRequestId: headerOf(result, 'x-fal-request-id') ?? ref.id, status: result.status },
      'fal result answered',
    );
    if (result.status < 200 || result.status >= 300) {
      const fieldOfInput = (ref.data as { fieldOfInput?: Record<string, string> } | undefined)?.fieldOfInput ?? {};
      const error = resultFailure(id, result.status, result.headers, result.text, scrub, fieldOfInput, job.upstreamModel);
      if (error instanceof ChannelError || error instanceof UnexpectedReply) throw error; // the channel's, or an answer to read again: look again later
      return { state: 'failed', error };
    }
    const mapping = mappingOf(models, job);
    if ('field' in mapping) return { state: 'failed', error: new UnrecoverableError(`${mapping.field}: ${mapping.message}`) };
    try {
      return { state: 'completed', output: { files: filesOf(who, parseJson(id, who, result.text), mapping.output, job.output.kind, job.upstreamModel) } };
    } catch (err) {
      // an answer that cannot be read is read again, on the same generation (G272)
      if (err instanceof ChannelError || err instanceof UnexpectedReply) throw err;
      return { state: 'failed', error: err as Error };
    }
  }

  async function cancel(ref: UpstreamRef, _job: ProviderJob, ctx: CallContext): Promise<void> {
    const answer = await http.send('PUT', refData(ref).cancel, undefined, ctx.signal, timeoutMs);
    // 202 CANCELLATION_REQUESTED; 400 ALREADY_COMPLETED and 404 (gone): nothing is left to stop
    if ((answer.status >= 200 && answer.status < 300) || answer.status === 400 || answer.status === 404) return;
    const failure = statusFailure(id, answer.status, answer.headers, answer.text, scrub);
    if (!('gone' in failure)) throw failure;
  }

  return {
    id,
    // the status of a request that does not exist: the queue checks the key first (401/403), then
    // answers that the request is unknown; nothing is generated
    probe: async (signal) => {
      // a request's URLs are under its app: the model id's first two segments (fal-ai/flux of fal-ai/flux/dev)
      const app = (Object.keys(models)[0] ?? 'fal-ai/fast-sdxl').split('/').slice(0, 2).join('/');
      const url = http.submitUrl(`${app}/requests/mediagate-probe/status`);
      return probeResult(
        `GET /${app}/requests/{id}/status`,
        await http.send('GET', url, undefined, signal, PROBE_TIMEOUT_MS),
        (s) => s < 500 && s !== 401 && s !== 403,
      );
    },
    capabilities: { families: FAMILIES },
    ...tuningOf(options),
    refuse,
    start,
    check,
    cancel,
    callbacks: falCallbacks({ id, who, http, jwksUrl: new URL(options.jwksUrl ?? FAL_DEFAULTS.jwksUrl) }),
    close: () => http.close(),
  };
}
