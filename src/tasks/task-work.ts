/**
 * What one leased piece of work does (the runner claims it and keeps its lease): start a task, or
 * check its generation at an upstream; store what was made; decide what a failure means. Every
 * change of the task goes through states.ts (G84-G89).
 */
import type { Logger } from 'pino';
import { abortRace, deadline } from '../deadline.js';
import { orderCandidates } from '../providers/channels.js';
import {
  ChannelError,
  GenerationKeyConflict,
  UnexpectedReply,
  UnrecoverableError,
  type CheckResult,
  type Provider,
  type ProviderContext,
  type ProviderJob,
  type ProviderOutput,
  type Refusal,
  type StartResult,
} from '../providers/types.js';
import { familyRequestOf } from '../contract/family-request.js';
import type { UpstreamRef } from '../contract/task-request.js';
import type { TaskRecord, UpstreamState } from '../store/types.js';
import { applyDecision, type ApplyExtras, type Applied } from './apply-decision.js';
import { serverFaultOf } from './backoff.js';
import { estimatedProgress } from './progress-estimate.js';
import { storeResultPatiently } from './patient-upload.js';
import { RemoteFileGone } from './result-storage.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { RunnerOptions } from './runner-options.js';
import { decide, stepLimitsOf, type StepOutcome, type StopReason } from './step-outcome.js';
import { routeOf } from './task-route.js';

/** What a piece of work uses of the runner's options (G402). */
export type WorkDeps = Pick<
  RunnerOptions,
  'store' | 'providers' | 'channels' | 'results' | 'maxAttempts' | 'videosResultTtlHours' | 'callbackUrl' | 'unavailableFailMs' | 'backoffScale'
>;

/** One leased piece of work, as the runner hands it over. */
export interface Work {
  task: TaskRecord;
  workerId: string;
  log: Logger;
  /** The provider context of this piece of work (a check is given it too; it reads no media there). */
  ctx: ProviderContext;
  controller: AbortController;
  job: ProviderJob;
  /** The highest progress reported so far. */
  progress(): number;
  deps: WorkDeps;
  attemptTimeoutMs: number;
}

/** How long a check may wait for its upstream, ms. */
const CHECK_TIMEOUT_MS = 60_000;
/** How long an upstream cancel may take, ms. */
const CANCEL_TIMEOUT_MS = 15_000;

/** What provider `providerId` is asked to make for `task`: the model under its name there. */
export function jobOf(task: TaskRecord, providerId: string): ProviderJob {
  const candidate = routeOf(task).find((c) => c.provider === providerId);
  return {
    ...familyRequestOf(task.family, task.form, task.request.params),
    taskId: task.id,
    model: task.model,
    upstreamModel: candidate?.model ?? task.model,
    output: task.request.output,
    media: task.request.media,
    attempt: task.attempts,
    generation: task.upstream?.generation ?? 0,
  };
}

function contextFor(w: Work, signal = w.ctx.signal): ProviderContext {
  return { ...w.ctx, signal };
}

/** A start's context: with the URL its upstream may notify the end of the generation at, where there is one (G157). */
function startContextFor(w: Work, provider: Provider): ProviderContext {
  const callbackUrl = w.deps.callbackUrl?.(provider.id, w.task.id);
  return { ...contextFor(w), ...(callbackUrl !== undefined && { callbackUrl }) };
}

/** What settling a step may need besides the write: the provider's polling interval, how to stop its generation. */
type SettleExtras = ApplyExtras & { pollSeconds?: Provider['pollSeconds']; cancelUpstream?: () => Promise<void> };

/**
 * Decides what `outcome` does to the task (step-outcome.ts) and writes it (apply-decision.ts):
 * every step of the work ends here (G397). Returns the task as written and the worker's pause.
 */
async function settle(w: Work, outcome: StepOutcome, extras: SettleExtras = {}): Promise<Applied> {
  const { pollSeconds, cancelUpstream, ...applyExtras } = extras;
  const now = Date.now();
  const decision = decide(outcome, w.task, {
    ...stepLimitsOf({ ...w.deps, attemptTimeoutMs: w.attemptTimeoutMs }, now),
    ...(pollSeconds !== undefined && { pollSeconds }),
  });
  let at = now;
  if (decision.type === 'fail' && decision.cancelUpstream && cancelUpstream) {
    await cancelUpstream();
    at = Date.now(); // the task ends after its generation was stopped
  }
  return applyDecision(
    { store: w.deps.store, videosResultTtlHours: w.deps.videosResultTtlHours, log: w.log, workerId: w.workerId },
    w.task,
    decision,
    at,
    applyExtras,
  );
}

/** {@link settle}, returning only the worker's pause. */
async function settled(w: Work, outcome: StepOutcome, extras?: SettleExtras): Promise<number | undefined> {
  return (await settle(w, outcome, extras)).pauseMs;
}

/**
 * Starts the task on the first channel of its route that takes it (G90): connect errors, timeouts,
 * 429 and 5xx (ChannelError) move on to the next candidate; anything else is the answer. A result
 * made at once is stored; a generation started elsewhere has its reference saved before anything
 * else. Returns how long the worker should pause (a fault of the gateway's own), if at all.
 */
export async function startTask(w: Work): Promise<number | undefined> {
  const route = routeOf(w.task);
  const candidates = orderCandidates(w.deps.channels.usable(route));
  let refusedBy: ChannelError | undefined;
  let refusal: Refusal | undefined;
  for (const candidate of candidates) {
    const provider = w.deps.providers.get(candidate.provider);
    if (!provider?.start) continue;
    // the provider's mapping may have changed since submit (a new providers.json): it is asked again
    const refused = w.deps.providers.refusalOf(candidate, w.job);
    if (refused) {
      refusal ??= refused;
      continue;
    }
    const start = provider.start.bind(provider);
    const job: ProviderJob = { ...w.job, upstreamModel: candidate.model ?? w.task.model };
    const started = w.deps.channels.call(provider.id, () => start(job, startContextFor(w, provider)), w.controller.signal);
    // a generation that starts after this work gave up on it (cancel) is stopped again at once
    started.then(
      (r) => {
        if (w.controller.signal.aborted && r.state === 'started' && w.controller.signal.reason === 'cancelled')
          void cancelAtUpstream(provider, r.ref, job, w.log);
      },
      () => undefined,
    );
    let result: StartResult;
    const aborted = abortRace(w.controller.signal); // a provider that ignores the signal is not waited for
    try {
      result = await Promise.race([started, aborted.promise]);
      w.controller.signal.throwIfAborted();
    } catch (err) {
      if (err instanceof ChannelError && !w.controller.signal.aborted) {
        refusedBy = err;
        w.log.warn({ err: err.message, channel: provider.id }, 'the channel could not take the task; trying the next');
        continue;
      }
      // the upstream refuses every repeat of this generation's create: a new generation goes on (G126)
      if (err instanceof GenerationKeyConflict && !w.controller.signal.aborted) return settled(w, { kind: 'generation-failed', error: err });
      return failedAttempt(w, err instanceof UnexpectedReply && !provider.idempotentCreates ? unreadableCreate(err) : err);
    } finally {
      aborted.release();
    }
    // a result made at once by a later candidate (failover) is that candidate's: the task names it
    if (result.state === 'done') return finish(w, result.output, undefined, provider.id);
    return saveStarted(w, provider, job, result);
  }
  if (refusal && route.every((c) => w.deps.providers.refusalOf(c, w.job) !== undefined)) {
    return settled(w, { kind: 'refused', error: new UnrecoverableError(`${refusal.field}: ${refusal.message}`) });
  }
  // no channel could take it (G91, G274): it waits, at least until a channel takes calls again
  const channelWaitMs = Math.max(w.deps.channels.retryAfterMs(route), refusedBy?.retryAfterMs ?? 0);
  return settled(w, { kind: 'unavailable', channelWaitMs }, { logFields: { err: refusedBy?.message } });
}

/**
 * An answer to a create that could not be read, from an upstream where a repeat would be a second
 * generation (G453): that upstream may well have started (and billed) this one, which cannot be
 * followed without its answer; the task fails rather than starting another.
 */
function unreadableCreate(err: UnexpectedReply): UnrecoverableError {
  return new UnrecoverableError(
    `${err.message}; the generation it may have started cannot be followed, and it is not created again there (that would be a second, billed, generation)`,
    { cause: err },
  );
}

/** Saves a started generation's reference under the lease, then waits for its first check. */
async function saveStarted(w: Work, provider: Provider, job: ProviderJob, result: Extract<StartResult, { state: 'started' }>): Promise<undefined> {
  const now = Date.now();
  const started = { generation: job.generation, provider: provider.id, ref: result.ref, startedAt: now, checkFailures: 0 };
  const progress = result.progress === undefined ? undefined : Math.min(99, Math.max(0, Math.floor(result.progress)));
  const { task: saved } = await settle(
    w,
    { kind: 'started' },
    { started, ...(progress !== undefined && { progress }), ...(provider.pollSeconds !== undefined && { pollSeconds: provider.pollSeconds }) },
  );
  if (saved) {
    w.log.info({ channel: provider.id, upstreamId: result.ref.id, generation: job.generation }, 'generation started at the upstream');
    return;
  }
  // Cancelled meanwhile: stop it at the upstream too. (A lost lease means another worker has the
  // task: it starts the same generation under the same Idempotency-Key, so this one is left alone.)
  if ((await w.deps.store.get(w.task.id))?.status === 'cancelled') await cancelAtUpstream(provider, result.ref, job, w.log);
  w.log.warn({ upstreamId: result.ref.id }, 'started a generation but no longer held the task');
}

/**
 * One check of the task's generation at its upstream (G87): pending waits again (with the
 * upstream's progress); completed is stored; failed may start a new generation; a check that could
 * not be made waits longer each time, one that never can (an UnrecoverableError) fails the task
 * (G464). A generation older than the attempt time limit is stopped.
 */
export async function checkTask(w: Work): Promise<number | undefined> {
  const upstream = w.task.upstream as UpstreamState & { ref: UpstreamRef };
  const provider = upstream.provider === undefined ? undefined : w.deps.providers.get(upstream.provider);
  if (!provider?.check) {
    return settled(w, {
      kind: 'refused',
      error: new UnrecoverableError(`the provider that runs this task's generation (${upstream.provider ?? 'unknown'}) is no longer configured`),
    });
  }
  const poll = provider.pollSeconds === undefined ? {} : { pollSeconds: provider.pollSeconds };
  const job = jobOf(w.task, provider.id);
  const now = Date.now();
  if (upstream.startedAt !== undefined && now - upstream.startedAt > w.attemptTimeoutMs) {
    await cancelAtUpstream(provider, upstream.ref, job, w.log);
    return settled(w, { kind: 'generation-timed-out' });
  }
  const bounded = deadline(w.controller.signal, CHECK_TIMEOUT_MS);
  const { signal } = bounded;
  const aborted = abortRace(signal); // a provider that ignores the signal is not waited for
  let result: CheckResult;
  try {
    result = await Promise.race([w.deps.channels.call(provider.id, () => provider.check!(upstream.ref, job, contextFor(w, signal)), signal), aborted.promise]);
    w.controller.signal.throwIfAborted();
  } catch (err) {
    if (w.controller.signal.aborted) return settled(w, { kind: 'stopped', reason: w.controller.signal.reason as StopReason, checking: true });
    // an answer the gateway cannot use (G272): not the channel's fault, no reason for a new
    // generation; the same one is checked again up to MAX_REPLY_PROBLEMS times, then cancelled
    const cancelUpstream = () => cancelAtUpstream(provider, upstream.ref, job, w.log);
    if (err instanceof UnexpectedReply) return settled(w, { kind: 'reply-problem', error: err }, { ...poll, cancelUpstream });
    // the provider can never follow this generation (its saved reference no longer matches the
    // configuration): the task fails, not checked again until the attempt time limit (G464)
    if (err instanceof UnrecoverableError) return settled(w, { kind: 'unfollowable', error: err }, { cancelUpstream });
    const retryAfterMs = err instanceof ChannelError ? err.retryAfterMs : undefined;
    return settled(
      w,
      { kind: 'check-unanswered', ...(retryAfterMs !== undefined && { retryAfterMs }) },
      { ...poll, logFields: { err: err instanceof Error ? err.message : String(err) } },
    );
  } finally {
    aborted.release();
    bounded.release();
  }
  if (result.state === 'pending') {
    // the upstream's own progress, else an estimate from the time it has run (G129)
    const progress =
      result.progress === undefined
        ? Math.max(w.progress(), estimatedProgress(job.family, now - (upstream.startedAt ?? now)))
        : Math.min(99, Math.max(0, Math.floor(result.progress)));
    return settled(w, { kind: 'pending', ...(result.retryAfterMs !== undefined && { retryAfterMs: result.retryAfterMs }) }, { ...poll, progress });
  }
  if (result.state === 'failed') return settled(w, { kind: 'generation-failed', error: result.error });
  // the upstream still holds the result when its file cannot be fetched yet: look again later
  return finish(w, result.output, async (err) => {
    await settled(w, { kind: 'result-not-ready' }, { ...poll, logFields: { err: err instanceof Error ? err.message : String(err) } });
  });
}

/**
 * Stores what was made and completes the task. Each attempt stores its files under names of its
 * own (result-storage.ts), so a worker that lost the task can never overwrite the result of the one
 * that completed it; a refused completion removes its files. `retryLater`: what to do when a remote
 * file could not be fetched for now (a check looks again).
 */
async function finish(w: Work, output: ProviderOutput, retryLater?: (err: unknown) => Promise<void>, provider?: string): Promise<number | undefined> {
  const { store, results } = w.deps;
  let stored: Awaited<ReturnType<typeof results.store>>;
  try {
    stored = await storeResultPatiently(results, w.task.id, output, w.controller.signal, w.log);
  } catch (err) {
    if (w.controller.signal.aborted && w.task.upstream?.ref)
      return settled(w, { kind: 'stopped', reason: w.controller.signal.reason as StopReason, checking: true });
    if (w.controller.signal.aborted) return failedAttempt(w, err);
    if (err instanceof RemoteFileGone) return settled(w, { kind: 'generation-failed', error: err });
    if (serverFaultOf(err) === undefined && retryLater && !(err instanceof UnrecoverableError)) {
      await retryLater(err);
      return;
    }
    return failedAttempt(w, err);
  }
  const now = Date.now();
  const { task: done } = await settle(w, { kind: 'completed' }, { result: stored.result, ...(provider !== undefined && { completedBy: provider }) });
  if (done) {
    w.log.info({ ms: now - (w.task.startedAt ?? now) }, 'task completed');
    return;
  }
  // Cancelled, or another worker took over after our lease lapsed: our files are not the result.
  await stored.discard();
  w.log.warn({ status: (await store.get(w.task.id))?.status }, 'finished generation but no longer held the task');
}

/** A start (or storing its result) failed: why it stopped decides what happens to the task. */
function failedAttempt(w: Work, err: unknown): Promise<number | undefined> {
  const { signal } = w.controller;
  if (signal.aborted) return settled(w, { kind: 'stopped', reason: signal.reason as StopReason, checking: false, error: err });
  return settled(w, { kind: 'failed', error: err });
}

/**
 * The gateway was short of a resource (disk, descriptors, memory) while working on the task: not
 * the task's fault, so its attempt is given back and the fault counted apart; it runs again after
 * a pause, which this worker also takes before claiming anything else (G84). Returns the pause, ms.
 */
export function deferForServerFault(w: Work, err: unknown): Promise<number | undefined> {
  return settled(w, { kind: 'server-fault', error: err });
}

/**
 * After a cancel: stops the task's generation at its upstream, if one was started (whichever
 * process takes the cancel does this, worker or not; a start still in flight stops its own
 * generation when it sees the cancel, saveStarted).
 */
export async function cancelUpstreamOf(task: TaskRecord, providers: ProviderRegistry, log: Logger): Promise<void> {
  const upstream = task.upstream;
  if (!upstream?.ref || upstream.provider === undefined) return;
  const provider = providers.get(upstream.provider);
  if (provider) await cancelAtUpstream(provider, upstream.ref, jobOf(task, provider.id), log.child({ taskId: task.id }));
}

/** Asks the upstream to stop a generation (best effort, bounded in time; a failure is logged). */
export async function cancelAtUpstream(provider: Provider, ref: UpstreamRef, job: ProviderJob, log: Logger): Promise<void> {
  if (!provider.cancel) return;
  const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
  try {
    await provider.cancel(ref, job, {
      signal,
      log,
      workDir: '',
      reportProgress: () => undefined,
    });
    log.info({ channel: provider.id, upstreamId: ref.id }, 'generation cancelled at the upstream');
  } catch (err) {
    log.warn(
      { err: err instanceof Error ? err.message : String(err), channel: provider.id, upstreamId: ref.id },
      'could not cancel the generation at the upstream',
    );
  }
}
