/**
 * What one leased piece of work does (the runner claims it and keeps its lease): start a task, or
 * check its generation at an upstream; store what was made; decide what a failure means. Every
 * change of the task goes through states.ts (G84-G89).
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { abortRace, deadline } from '../deadline.js';
import { orderCandidates, type RouteCandidate } from '../providers/channels.js';
import { ChannelError, GenerationKeyConflict, MAX_REPLY_PROBLEMS, UnexpectedReply, UnrecoverableError, type CheckResult, type Provider, type ProviderContext, type ProviderJob, type ProviderOutput, type Refusal, type StartResult, type UpstreamRef } from '../providers/types.js';
import type { TaskRecord, UpstreamState } from '../store/types.js';
import { failureMessage, MAX_SERVER_FAULTS, retryDelayMs, serverFaultDelayMs, serverFaultOf, shouldRetry } from './backoff.js';
import { nextCheckDelayMs } from './check-delay.js';
import { estimatedProgress } from './progress-estimate.js';
import { expiryOf } from './expiry.js';
import { storeResultPatiently } from './patient-upload.js';
import { RemoteFileGone } from './result-storage.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { RunnerOptions } from './runner-options.js';
import { completeTask, failTask, requeueTask, saveUpstreamRef, scheduleCheck, startNewGeneration } from './states.js';

export type StopReason = 'shutdown' | 'lease-lost' | 'cancelled' | 'attempt-timeout';

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
  opts: RunnerOptions;
  attemptTimeoutMs: number;
}

/** How long a check may wait for its upstream, ms. */
const CHECK_TIMEOUT_MS = 60_000;
/** How long an upstream cancel may take, ms. */
const CANCEL_TIMEOUT_MS = 15_000;

/** The route of a task: the candidates of its model when it was submitted, else its own provider. */
export function routeOf(task: TaskRecord): RouteCandidate[] {
  return task.request.route ?? [{ provider: task.provider, priority: 0, weight: 1 }];
}

/** What provider `providerId` is asked to make for `task`: the model under its name there. */
export function jobOf(task: TaskRecord, providerId: string): ProviderJob {
  const candidate = routeOf(task).find((c) => c.provider === providerId);
  return {
    taskId: task.id, family: task.family, form: task.form, model: task.model, upstreamModel: candidate?.model ?? task.model,
    params: task.request.params, output: task.request.output, media: task.request.media, attempt: task.attempts,
    generation: task.upstream?.generation ?? 0,
  };
}

function contextFor(w: Work, signal = w.ctx.signal): ProviderContext {
  return { ...w.ctx, signal };
}

/** A start's context: with the URL its upstream may notify the end of the generation at, where there is one (G157). */
function startContextFor(w: Work, provider: Provider): ProviderContext {
  const callbackUrl = w.opts.callbackUrl?.(provider.id, w.task.id);
  return { ...contextFor(w), ...(callbackUrl !== undefined && { callbackUrl }) };
}

const expiry = (w: Work, status: 'completed' | 'failed', now: number): number | null => expiryOf(w.task.family, status, now, w.opts.videosResultTtlHours);

/**
 * Starts the task on the first channel of its route that takes it (G90): connect errors, timeouts,
 * 429 and 5xx (ChannelError) move on to the next candidate; anything else is the answer. A result
 * made at once is stored; a generation started elsewhere has its reference saved before anything
 * else. Returns how long the worker should pause (a fault of the gateway's own), if at all.
 */
export async function startTask(w: Work): Promise<number | undefined> {
  const route = routeOf(w.task);
  const candidates = orderCandidates(w.opts.channels.usable(route));
  let refusedBy: ChannelError | undefined;
  let refusal: Refusal | undefined;
  for (const candidate of candidates) {
    const provider = w.opts.providers.get(candidate.provider);
    if (!provider?.start) continue;
    // the provider's mapping may have changed since submit (a new providers.json): it is asked again
    const refused = w.opts.providers.refusalOf(candidate, w.job);
    if (refused) {
      refusal ??= refused;
      continue;
    }
    const start = provider.start.bind(provider);
    const job: ProviderJob = { ...w.job, upstreamModel: candidate.model ?? w.task.model };
    const started = w.opts.channels.call(provider.id, () => start(job, startContextFor(w, provider)), w.controller.signal);
    // a generation that starts after this work gave up on it (cancel) is stopped again at once
    started.then((r) => {
      if (w.controller.signal.aborted && r.state === 'started' && w.controller.signal.reason === 'cancelled') void cancelAtUpstream(provider, r.ref, job, w.log);
    }, () => undefined);
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
      if (err instanceof GenerationKeyConflict && !w.controller.signal.aborted) return generationFailed(w, err);
      return failedAttempt(w, err);
    } finally {
      aborted.release();
    }
    // a result made at once by a later candidate (failover) is that candidate's: the task names it
    if (result.state === 'done') return finish(w, result.output, undefined, provider.id);
    return saveStarted(w, provider, job, result);
  }
  if (refusal && route.every((c) => w.opts.providers.refusalOf(c, w.job) !== undefined)) {
    return failForGood(w, new UnrecoverableError(`${refusal.field}: ${refusal.message}`));
  }
  return deferForUnavailable(w, route, refusedBy);
}

/** Saves a started generation's reference under the lease, then waits for its first check. */
async function saveStarted(w: Work, provider: Provider, job: ProviderJob, result: Extract<StartResult, { state: 'started' }>): Promise<undefined> {
  const now = Date.now();
  const upstream = { generation: job.generation, provider: provider.id, ref: result.ref, startedAt: now, checkFailures: 0 };
  const progress = result.progress === undefined ? undefined : Math.min(99, Math.max(0, Math.floor(result.progress)));
  const saved = await saveUpstreamRef(w.opts.store, w.task, w.workerId, upstream, now + checkDelay(provider, job), progress);
  if (saved) {
    w.log.info({ channel: provider.id, upstreamId: result.ref.id, generation: job.generation }, 'generation started at the upstream');
    return;
  }
  // Cancelled meanwhile: stop it at the upstream too. (A lost lease means another worker has the
  // task: it starts the same generation under the same Idempotency-Key, so this one is left alone.)
  if ((await w.opts.store.get(w.task.id))?.status === 'cancelled') await cancelAtUpstream(provider, result.ref, job, w.log);
  w.log.warn({ upstreamId: result.ref.id }, 'started a generation but no longer held the task');
}

function checkDelay(provider: Provider, job: ProviderJob, failures = 0, retryAfterMs?: number): number {
  return nextCheckDelayMs(job.family, {
    failures, ...(provider.pollSeconds !== undefined && { configured: provider.pollSeconds }), ...(retryAfterMs !== undefined && { retryAfterMs }),
  });
}

/**
 * One check of the task's generation at its upstream (G87): pending waits again (with the
 * upstream's progress); completed is stored; failed may start a new generation; a check that could
 * not be made waits longer each time. A generation older than the attempt time limit is stopped.
 */
export async function checkTask(w: Work): Promise<number | undefined> {
  const upstream = w.task.upstream as UpstreamState & { ref: UpstreamRef };
  const provider = upstream.provider === undefined ? undefined : w.opts.providers.get(upstream.provider);
  if (!provider?.check) {
    return failForGood(w, new UnrecoverableError(`the provider that runs this task's generation (${upstream.provider ?? 'unknown'}) is no longer configured`));
  }
  const job = jobOf(w.task, provider.id);
  const now = Date.now();
  if (upstream.startedAt !== undefined && now - upstream.startedAt > w.attemptTimeoutMs) {
    await cancelAtUpstream(provider, upstream.ref, job, w.log);
    // an upstream that could not be asked may have finished it: say which it was (G122)
    const unread = upstream.checkFailures > 0 ? `; the last ${upstream.checkFailures} checks of its status at the upstream failed` : '';
    return generationFailed(w, new AppError('upstream_timeout', `generation did not finish within ${Math.round(w.attemptTimeoutMs / 1000)} s (attempt ${w.task.attempts} of ${w.opts.maxAttempts})${unread}`));
  }
  const bounded = deadline(w.controller.signal, CHECK_TIMEOUT_MS);
  const { signal } = bounded;
  const aborted = abortRace(signal); // a provider that ignores the signal is not waited for
  let result: CheckResult;
  try {
    result = await Promise.race([
      w.opts.channels.call(provider.id, () => provider.check!(upstream.ref, job, contextFor(w, signal)), signal),
      aborted.promise,
    ]);
    w.controller.signal.throwIfAborted();
  } catch (err) {
    if (w.controller.signal.aborted) return stopped(w);
    if (err instanceof UnexpectedReply) return replyProblem(w, provider, job, upstream, err);
    const failures = upstream.checkFailures + 1;
    const retryAfterMs = err instanceof ChannelError ? err.retryAfterMs : undefined;
    const delay = checkDelay(provider, job, failures, retryAfterMs);
    await scheduleCheck(w.opts.store, w.task, w.workerId, Date.now() + delay, { ...upstream, checkFailures: failures });
    w.log.warn({ err: err instanceof Error ? err.message : String(err), failures, retryInMs: delay }, 'the check could not be made; checking again later');
    return;
  } finally {
    aborted.release();
    bounded.release();
  }
  if (result.state === 'pending') {
    const delay = checkDelay(provider, job, 0, result.retryAfterMs);
    // the upstream's own progress, else an estimate from the time it has run (G129)
    const progress = result.progress === undefined
      ? Math.max(w.progress(), estimatedProgress(job.family, now - (upstream.startedAt ?? now)))
      : Math.min(99, Math.max(0, Math.floor(result.progress)));
    await scheduleCheck(w.opts.store, w.task, w.workerId, Date.now() + delay, { ...answered(upstream), checkFailures: 0 }, progress);
    return;
  }
  if (result.state === 'failed') return generationFailed(w, result.error);
  return finish(w, result.output, async () => {
    // the upstream still holds the result: look again later
    const failures = upstream.checkFailures + 1;
    await scheduleCheck(w.opts.store, w.task, w.workerId, Date.now() + checkDelay(provider, job, failures), { ...upstream, checkFailures: failures });
  });
}

/** The generation's state once a check was answered in a way the gateway understood: no reply problems in a row. */
function answered(upstream: UpstreamState): UpstreamState {
  const { replyProblems: _, ...rest } = upstream;
  return rest;
}

/**
 * A check answered with something the gateway cannot use (G272): not the channel's fault (it does
 * not count toward its circuit) and no reason for a new generation. The same generation is checked
 * again, backing off, up to {@link MAX_REPLY_PROBLEMS} checks in a row; then the generation is
 * cancelled at the upstream (best effort) and the task fails with what the upstream answered.
 */
async function replyProblem(w: Work, provider: Provider, job: ProviderJob, upstream: UpstreamState & { ref: UpstreamRef }, err: UnexpectedReply): Promise<number | undefined> {
  const problems = (upstream.replyProblems ?? 0) + 1;
  if (problems >= MAX_REPLY_PROBLEMS) {
    await cancelAtUpstream(provider, upstream.ref, job, w.log);
    return failForGood(w, new UnrecoverableError(`${err.message} (at ${problems} checks in a row); the task was given up`));
  }
  const delay = checkDelay(provider, job, problems);
  await scheduleCheck(w.opts.store, w.task, w.workerId, Date.now() + delay, { ...upstream, replyProblems: problems });
  w.log.warn({ err: err.message, replyProblems: problems, retryInMs: delay }, 'the upstream\'s answer to a check could not be used; checking the same generation again later');
  return undefined;
}

/** A check stopped before it answered: a shutdown puts the task back to waiting; a cancel or a lost lease leaves it. */
async function stopped(w: Work): Promise<undefined> {
  if (w.controller.signal.reason === 'shutdown' && w.task.upstream) {
    await scheduleCheck(w.opts.store, w.task, w.workerId, Date.now(), w.task.upstream);
  }
}

/**
 * Stores what was made and completes the task. Each attempt stores its files under names of its
 * own (result-storage.ts), so a worker that lost the task can never overwrite the result of the one
 * that completed it; a refused completion removes its files. `retryLater`: what to do when a remote
 * file could not be fetched for now (a check looks again).
 */
async function finish(w: Work, output: ProviderOutput, retryLater?: () => Promise<void>, provider?: string): Promise<number | undefined> {
  const { store, results } = w.opts;
  let stored: Awaited<ReturnType<typeof results.store>>;
  try {
    stored = await storeResultPatiently(results, w.task.id, output, w.controller.signal, w.log);
  } catch (err) {
    if (w.controller.signal.aborted) return w.task.upstream?.ref ? stopped(w) : failedAttempt(w, err);
    if (err instanceof RemoteFileGone) return generationFailed(w, err);
    if (serverFaultOf(err) === undefined && retryLater && !(err instanceof UnrecoverableError)) {
      w.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not fetch the result yet; checking again later');
      await retryLater();
      return;
    }
    return failedAttempt(w, err);
  }
  const now = Date.now();
  const done = await completeTask(store, w.task, w.workerId, stored.result, expiry(w, 'completed', now)!, now, provider);
  if (done) {
    w.log.info({ ms: now - (w.task.startedAt ?? now) }, 'task completed');
    return;
  }
  // Cancelled, or another worker took over after our lease lapsed: our files are not the result.
  await stored.discard();
  w.log.warn({ status: (await store.get(w.task.id))?.status }, 'finished generation but no longer held the task');
}

/** A start (or storing its result) failed: why it stopped decides what happens to the task. */
async function failedAttempt(w: Work, err: unknown): Promise<number | undefined> {
  const { store, maxAttempts } = w.opts;
  const reason = w.controller.signal.aborted ? (w.controller.signal.reason as StopReason) : undefined;
  if (reason === 'attempt-timeout') {
    err = new AppError('upstream_timeout', `generation did not finish within ${Math.round(w.attemptTimeoutMs / 1000)} s (attempt ${w.task.attempts} of ${maxAttempts})`, { retryable: true });
  }
  if (reason === 'cancelled') { w.log.info('task cancelled while running'); return; }
  if (reason === 'lease-lost') { w.log.warn('lost the lease; another worker owns the task now'); return; }
  if (reason === 'shutdown') {
    await requeueTask(store, w.task, w.workerId, Date.now(), { refundAttempt: true });
    w.log.info('returned to the queue on shutdown');
    return;
  }
  if (serverFaultOf(err)) return deferForServerFault(w, err);
  const now = Date.now();
  if (shouldRetry(err, w.task.attempts, maxAttempts)) {
    const delay = retryDelayMs(w.task.attempts);
    const upstream = w.task.upstream?.unavailableSince === undefined ? undefined : withoutUnavailable(w.task.upstream);
    await requeueTask(store, w.task, w.workerId, now + delay, { error: failureMessage(err), ...(upstream && { upstream }) });
    w.log.warn({ err, retryInMs: delay }, 'attempt failed; will retry');
    return;
  }
  return failForGood(w, err);
}

/**
 * The generation at the upstream failed (its own answer, a timeout, its file gone): a new one,
 * unless the failure is final or the attempts are used up. Never one of the gateway's own faults:
 * an upstream's failure text is not read for them.
 */
async function generationFailed(w: Work, err: unknown): Promise<number | undefined> {
  if (shouldRetry(err, w.task.attempts, w.opts.maxAttempts)) {
    const delay = retryDelayMs(w.task.attempts);
    await startNewGeneration(w.opts.store, w.task, w.workerId, routeOf(w.task)[0]!.provider, Date.now() + delay, failureMessage(err));
    w.log.warn({ err: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'the generation failed; a new one will be started');
    return;
  }
  return failForGood(w, err);
}

async function failForGood(w: Work, err: unknown): Promise<undefined> {
  const now = Date.now();
  const message = failureMessage(err);
  await failTask(w.opts.store, w.task, w.workerId, message, expiry(w, 'failed', now), now);
  w.log.warn({ error: message }, 'task failed');
}

/**
 * The gateway was short of a resource (disk, descriptors, memory) while working on the task: not
 * the task's fault, so its attempt is given back and the fault counted apart; it runs again after
 * a pause, which this worker also takes before claiming anything else. After
 * {@link MAX_SERVER_FAULTS} such faults (about 15 minutes of them) the task fails, saying so (G84).
 * Returns the pause, ms.
 */
export async function deferForServerFault(w: Work, err: unknown): Promise<number | undefined> {
  const code = serverFaultOf(err) ?? (err as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  const delay = await deferTask(w, err, `it was short of a resource of its own (${code})`);
  return delay;
}

/** MEDIAGATE_UNAVAILABLE_FAIL_SECONDS' default, ms. */
const DEFAULT_UNAVAILABLE_FAIL_MS = 1800_000;

/**
 * No channel of the task's route could take it (all refused, or their circuits are open): the
 * upstreams' fault, not the task's (G91). Its attempt is given back and it waits in the queue (at
 * least until a channel takes calls again, backing off up to a minute), saying so in its query
 * reply (`queue_reason`), and tries again; `MEDIAGATE_UNAVAILABLE_FAIL_SECONDS` after it first
 * found no channel it fails, naming no upstream, its hold released (G274). The worker goes on
 * with other work.
 */
async function deferForUnavailable(w: Work, route: RouteCandidate[], refusedBy: ChannelError | undefined): Promise<undefined> {
  const now = Date.now();
  const since = w.task.upstream?.unavailableSince ?? now;
  const failMs = w.opts.unavailableFailMs ?? DEFAULT_UNAVAILABLE_FAIL_MS;
  if (now - since >= failMs) {
    const message = `no upstream of model ${w.task.model} could take this task for ${Math.round(failMs / 1000)} s (each refused it or is paused after repeated faults); nothing in the request caused it, submit it again later`;
    await failTask(w.opts.store, w.task, w.workerId, message, expiry(w, 'failed', now), now);
    w.log.error({ err: refusedBy, waitedMs: now - since }, 'task failed: no upstream could take it in time');
    return;
  }
  // refusals count in a row (G123) for the backoff only: the time since the first one decides when it fails
  const waitMs = Math.max(w.opts.channels.retryAfterMs(route), refusedBy?.retryAfterMs ?? 0, serverFaultDelayMs(w.task.serverFaults + 1));
  // looked at again by its deadline at the latest, so it fails on time
  const delay = Math.min(waitMs, since + failMs - now);
  const upstream: UpstreamState = { ...(w.task.upstream ?? { generation: 0, checkFailures: 0 }), unavailableSince: since };
  await requeueTask(w.opts.store, w.task, w.workerId, now + delay, { serverFault: true, upstream });
  w.log.warn({ err: refusedBy?.message, retryInMs: delay, waitingMs: now - since }, 'no upstream could take the task; it waits in the queue without using an attempt');
}

/** The upstream state once a channel answered: no longer waiting for one (G274). */
function withoutUnavailable(upstream: UpstreamState): UpstreamState {
  const { unavailableSince: _, ...rest } = upstream;
  return rest;
}

async function deferTask(w: Work, err: unknown, why: string, atLeastMs = 0): Promise<number | undefined> {
  const now = Date.now();
  const faults = w.task.serverFaults + 1;
  if (faults > MAX_SERVER_FAULTS) {
    const message = `the gateway could not run this task: ${why} each of the last ${MAX_SERVER_FAULTS} times it tried; nothing in the request caused it, submit it again`;
    await failTask(w.opts.store, w.task, w.workerId, message, expiry(w, 'failed', now), now);
    w.log.error({ err, why }, 'task failed: the gateway kept failing to run it');
    return;
  }
  const delay = Math.max(atLeastMs, serverFaultDelayMs(faults));
  await requeueTask(w.opts.store, w.task, w.workerId, now + delay, { serverFault: true, error: `not run: ${why}` });
  w.log.error({ err, why, retryInMs: delay, serverFaults: faults }, 'the task goes back to the queue without using an attempt');
  return delay;
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
      signal, log, workDir: '', reportProgress: () => undefined,
    });
    log.info({ channel: provider.id, upstreamId: ref.id }, 'generation cancelled at the upstream');
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err), channel: provider.id, upstreamId: ref.id }, 'could not cancel the generation at the upstream');
  }
}
