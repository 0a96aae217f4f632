/**
 * What happens to a task after each step of its work, decided in one place (G397): the step's
 * outcome, the task's counters (attempts, server faults, check failures, reply problems, since when
 * no channel took it, its generation) and the limits give one transition and its delay. `decide` is
 * pure (the clock and the jitter come in `limits`); apply-decision.ts writes the transition through
 * states.ts. Every row of the policy is in test/unit/step-decisions.test.ts.
 */
import { AppError } from '../errors.js';
import { MAX_REPLY_PROBLEMS, type PollSeconds, type UnexpectedReply, UnrecoverableError } from '../providers/types.js';
import type { TaskRecord, UpstreamState } from '../store/types.js';
import { failureMessage, MAX_SERVER_FAULTS, retryDelayMs, serverFaultDelayMs, serverFaultOf, shouldRetry } from './backoff.js';
import { nextCheckDelayMs } from './check-delay.js';
import { routeOf } from './task-route.js';

/** Why a piece of work was stopped before it ended. */
export type StopReason = 'shutdown' | 'lease-lost' | 'cancelled' | 'attempt-timeout';

/** What one step of a task's work came to (G397). */
export type StepOutcome =
  /** What was made is stored: the task completes. */
  | { kind: 'completed' }
  /** A generation was started at an upstream: its reference is saved, its first check waits. */
  | { kind: 'started' }
  /** A check: the generation still runs. */
  | { kind: 'pending'; retryAfterMs?: number }
  /** A check could not be made (connect error, timeout, 5xx, open circuit). */
  | { kind: 'check-unanswered'; retryAfterMs?: number }
  /** The generation ended but its remote file could not be fetched yet: a check looks again. */
  | { kind: 'result-not-ready' }
  /** A check answered with something the gateway cannot use (G272). */
  | { kind: 'reply-problem'; error: UnexpectedReply }
  /** A check that can never be made: the provider cannot follow the saved reference any more (G464). */
  | { kind: 'unfollowable'; error: UnrecoverableError }
  /** A start (or storing its result) failed. */
  | { kind: 'failed'; error: unknown }
  /** The generation at the upstream failed (its answer, its file gone, its key refused). */
  | { kind: 'generation-failed'; error: unknown }
  /** The generation ran longer than one attempt may (it was cancelled at the upstream). */
  | { kind: 'generation-timed-out' }
  /** Refused for good: every channel's mapping refuses the request, or its provider is gone. */
  | { kind: 'refused'; error: UnrecoverableError }
  /** The gateway was short of a resource of its own (G84). */
  | { kind: 'server-fault'; error: unknown }
  /** No channel of the route could take the task (G91, G274); `channelWaitMs`: until one may. */
  | { kind: 'unavailable'; channelWaitMs: number }
  /** The work was stopped (`checking`: a check of a generation, else a start). */
  | { kind: 'stopped'; reason: StopReason; checking: boolean; error?: unknown }
  /** The worker holding the lease stopped renewing it (the lapsed-lease sweep). */
  | { kind: 'lease-lapsed' };

/** MEDIAGATE_UNAVAILABLE_FAIL_SECONDS' default, ms. */
export const DEFAULT_UNAVAILABLE_FAIL_MS = 1800_000;

/** What the decision depends on besides the task. */
export interface StepLimits {
  now: number;
  maxAttempts: number;
  attemptTimeoutMs: number;
  /** How long a task may wait for a channel before it fails, ms (G274). */
  unavailableFailMs: number;
  /** The provider's configured polling interval, if any. */
  pollSeconds?: PollSeconds;
  /** The jitter of the delays (Math.random in production). */
  random?: () => number;
  /**
   * The runner's own waits (before a retry, after a server fault, for a channel to take calls) times
   * this; never an upstream's Retry-After nor a circuit's open period (default 1; tests shorten them, G267).
   */
  backoffScale?: number;
}

/** The settings the limits come from: the runner's (its attempt timeout resolved). */
export interface LimitSettings {
  maxAttempts: number;
  attemptTimeoutMs: number;
  unavailableFailMs?: number | undefined;
  backoffScale?: number | undefined;
}

/** The limits of `settings` at `now`: the one place a runner's settings become {@link StepLimits}. */
export function stepLimitsOf(settings: LimitSettings, now: number): StepLimits {
  return {
    now,
    maxAttempts: settings.maxAttempts,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    unavailableFailMs: settings.unavailableFailMs ?? DEFAULT_UNAVAILABLE_FAIL_MS,
    ...(settings.backoffScale !== undefined && { backoffScale: settings.backoffScale }),
  };
}

/** A line for the log that says what was decided. */
export interface DecisionNote {
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields?: Record<string, unknown>;
}

/** The transition to make (each through states.ts) and its delay, ms. */
export type Decision =
  /** processing -> completed. */
  (
    | { type: 'complete' }
    /** processing, leased -> processing with the started generation's reference, checked after `delayMs`. */
    | { type: 'save-ref'; delayMs: number }
    /** processing, leased for a check -> waiting for the next check after `delayMs`, with `upstream`. */
    | { type: 'check-later'; delayMs: number; upstream: UpstreamState }
    /** processing -> queued after `delayMs`; `pauseWorker`: the worker claims nothing for as long. */
    | { type: 'requeue'; delayMs: number; refundAttempt?: true; serverFault?: true; error?: string; upstream?: UpstreamState; pauseWorker?: true }
    /** processing -> queued for generation number `generation`, started from `provider` after `delayMs` (its attempt used). */
    | { type: 'new-generation'; delayMs: number; provider: string; generation: number; error: string }
    /** processing -> failed; `cancelUpstream`: stop the generation at its upstream first. */
    | { type: 'fail'; message: string; cancelUpstream?: true }
    /** processing with a lapsed lease -> queued, or back to waiting for its check (G86). */
    | { type: 'recover' }
    /** Nothing to write (cancelled, or another worker holds the task). */
    | { type: 'none' }
  ) & { note?: DecisionNote };

/** The delay of a decision, ms (0 when it writes none). */
export const delayOf = (d: Decision): number => ('delayMs' in d ? d.delayMs : 0);

/** One of the runner's own waits, ms, times the limits' backoffScale (G267). */
const scaled = (ms: number, limits: StepLimits): number => Math.round(ms * (limits.backoffScale ?? 1));

const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The one function that decides what a step's outcome does to its task (G397-G401). */
export function decide(outcome: StepOutcome, task: TaskRecord, limits: StepLimits): Decision {
  const checkDelay = (failures: number, retryAfterMs?: number): number =>
    nextCheckDelayMs(
      task.family,
      {
        failures,
        ...(limits.pollSeconds !== undefined && { configured: limits.pollSeconds }),
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      },
      limits.random,
    );
  const upstream = task.upstream ?? { generation: 0, checkFailures: 0 };
  switch (outcome.kind) {
    case 'completed':
      return { type: 'complete' };
    case 'started':
      return { type: 'save-ref', delayMs: checkDelay(0) };
    case 'pending':
      return { type: 'check-later', delayMs: checkDelay(0, outcome.retryAfterMs), upstream: { ...answered(upstream), checkFailures: 0 } };
    case 'check-unanswered': {
      const failures = upstream.checkFailures + 1;
      const delayMs = checkDelay(failures, outcome.retryAfterMs);
      return {
        type: 'check-later',
        delayMs,
        upstream: { ...upstream, checkFailures: failures },
        note: { level: 'warn', msg: 'the check could not be made; checking again later', fields: { failures, retryInMs: delayMs } },
      };
    }
    case 'result-not-ready': {
      const failures = upstream.checkFailures + 1;
      return {
        type: 'check-later',
        delayMs: checkDelay(failures),
        upstream: { ...upstream, checkFailures: failures },
        note: { level: 'warn', msg: 'could not fetch the result yet; checking again later' },
      };
    }
    case 'reply-problem':
      return replyProblem(outcome.error, upstream, checkDelay);
    case 'unfollowable':
      // checking again would say the same until the attempt time limit: the task fails now, its
      // generation stopped at the upstream where that can still be done (G464)
      return { ...failForGood(outcome.error), cancelUpstream: true };
    case 'stopped':
      return stopped(outcome, task, limits);
    case 'failed':
      return failedAttempt(outcome.error, task, limits);
    case 'generation-failed':
      return generationFailed(outcome.error, task, limits);
    case 'generation-timed-out': {
      // an upstream that could not be asked may have finished it: say which it was (G122)
      const unread = upstream.checkFailures > 0 ? `; the last ${upstream.checkFailures} checks of its status at the upstream failed` : '';
      return generationFailed(
        new AppError(
          'upstream_timeout',
          `generation did not finish within ${Math.round(limits.attemptTimeoutMs / 1000)} s (attempt ${task.attempts} of ${limits.maxAttempts})${unread}`,
        ),
        task,
        limits,
      );
    }
    case 'refused':
      return failForGood(outcome.error);
    case 'server-fault':
      return serverFault(outcome.error, task, limits);
    case 'unavailable':
      return unavailable(outcome.channelWaitMs, task, limits);
    case 'lease-lapsed':
      if (!task.upstream?.ref && task.attempts >= limits.maxAttempts) {
        return { type: 'fail', message: `generation did not finish: the worker running it stopped responding ${task.attempts} time(s); giving up` };
      }
      return { type: 'recover' };
  }
}

/** The generation's state once a check was answered in a way the gateway understood: no reply problems in a row. */
function answered(upstream: UpstreamState): UpstreamState {
  const { replyProblems: _, ...rest } = upstream;
  return rest;
}

/**
 * A check answered with something the gateway cannot use (G272): the same generation is checked
 * again, backing off, up to MAX_REPLY_PROBLEMS checks in a row; then it is cancelled at the
 * upstream and the task fails with what the upstream answered (G400).
 */
function replyProblem(err: UnexpectedReply, upstream: UpstreamState, checkDelay: (failures: number) => number): Decision {
  const problems = (upstream.replyProblems ?? 0) + 1;
  if (problems >= MAX_REPLY_PROBLEMS) {
    return { ...failForGood(new UnrecoverableError(`${err.message} (at ${problems} checks in a row); the task was given up`)), cancelUpstream: true };
  }
  const delayMs = checkDelay(problems);
  return {
    type: 'check-later',
    delayMs,
    upstream: { ...upstream, replyProblems: problems },
    note: {
      level: 'warn',
      msg: "the upstream's answer to a check could not be used; checking the same generation again later",
      fields: { err: err.message, replyProblems: problems, retryInMs: delayMs },
    },
  };
}

/** Work stopped before it ended: a shutdown puts the task back (its attempt given back); a cancel or a lost lease leaves it (G398). */
function stopped(outcome: Extract<StepOutcome, { kind: 'stopped' }>, task: TaskRecord, limits: StepLimits): Decision {
  if (outcome.checking) {
    return outcome.reason === 'shutdown' && task.upstream ? { type: 'check-later', delayMs: 0, upstream: task.upstream } : { type: 'none' };
  }
  switch (outcome.reason) {
    case 'cancelled':
      return { type: 'none', note: { level: 'info', msg: 'task cancelled while running' } };
    case 'lease-lost':
      return { type: 'none', note: { level: 'warn', msg: 'lost the lease; another worker owns the task now' } };
    case 'shutdown':
      return { type: 'requeue', delayMs: 0, refundAttempt: true, note: { level: 'info', msg: 'returned to the queue on shutdown' } };
    case 'attempt-timeout':
      return failedAttempt(
        new AppError(
          'upstream_timeout',
          `generation did not finish within ${Math.round(limits.attemptTimeoutMs / 1000)} s (attempt ${task.attempts} of ${limits.maxAttempts})`,
          { retryable: true },
        ),
        task,
        limits,
      );
  }
}

/** A start (or storing its result) failed: the gateway's own fault is deferred; else retried while attempts last (G398). */
function failedAttempt(err: unknown, task: TaskRecord, limits: StepLimits): Decision {
  if (serverFaultOf(err)) return serverFault(err, task, limits);
  if (!shouldRetry(err, task.attempts, limits.maxAttempts)) return failForGood(err);
  const delayMs = scaled(retryDelayMs(task.attempts, limits.random), limits);
  // a channel answered: the task no longer waits for one (G274)
  const upstream = task.upstream?.unavailableSince === undefined ? undefined : withoutUnavailable(task.upstream);
  return {
    type: 'requeue',
    delayMs,
    error: failureMessage(err),
    ...(upstream && { upstream }),
    note: { level: 'warn', msg: 'attempt failed; will retry', fields: { err, retryInMs: delayMs } },
  };
}

/** The generation failed: a new one from the route's first candidate, unless final or out of attempts (G399). */
function generationFailed(err: unknown, task: TaskRecord, limits: StepLimits): Decision {
  if (!shouldRetry(err, task.attempts, limits.maxAttempts)) return failForGood(err);
  const delayMs = scaled(retryDelayMs(task.attempts, limits.random), limits);
  return {
    type: 'new-generation',
    delayMs,
    provider: routeOf(task)[0]!.provider,
    generation: (task.upstream?.generation ?? 0) + 1,
    error: failureMessage(err),
    note: { level: 'warn', msg: 'the generation failed; a new one will be started', fields: { err: errText(err), retryInMs: delayMs } },
  };
}

function failForGood(err: unknown): Extract<Decision, { type: 'fail' }> {
  const message = failureMessage(err);
  return { type: 'fail', message, note: { level: 'warn', msg: 'task failed', fields: { error: message } } };
}

/** The gateway's own fault (G84): the attempt given back, the fault counted apart, the worker paused; failed after MAX_SERVER_FAULTS. */
function serverFault(err: unknown, task: TaskRecord, limits: StepLimits): Decision {
  const code = serverFaultOf(err) ?? (err as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  const why = `it was short of a resource of its own (${code})`;
  const faults = task.serverFaults + 1;
  if (faults > MAX_SERVER_FAULTS) {
    return {
      type: 'fail',
      message: `the gateway could not run this task: ${why} each of the last ${MAX_SERVER_FAULTS} times it tried; nothing in the request caused it, submit it again`,
      note: { level: 'error', msg: 'task failed: the gateway kept failing to run it', fields: { err, why } },
    };
  }
  const delayMs = scaled(serverFaultDelayMs(faults), limits);
  return {
    type: 'requeue',
    delayMs,
    serverFault: true,
    error: `not run: ${why}`,
    pauseWorker: true,
    note: { level: 'error', msg: 'the task goes back to the queue without using an attempt', fields: { err, why, retryInMs: delayMs, serverFaults: faults } },
  };
}

/**
 * No channel could take the task (G91, G274): it waits in the queue without using an attempt,
 * backing off, looked at again by its deadline at the latest; `unavailableFailMs` after it first
 * found none it fails, naming no upstream.
 */
function unavailable(channelWaitMs: number, task: TaskRecord, limits: StepLimits): Decision {
  const { now, unavailableFailMs: failMs } = limits;
  const since = task.upstream?.unavailableSince ?? now;
  if (now - since >= failMs) {
    return {
      type: 'fail',
      message: `no upstream of model ${task.model} could take this task for ${Math.round(failMs / 1000)} s (each refused it or is paused after repeated faults); nothing in the request caused it, submit it again later`,
      note: { level: 'error', msg: 'task failed: no upstream could take it in time', fields: { waitedMs: now - since } },
    };
  }
  // refusals count in a row (G123) for the backoff only: the time since the first one decides when it fails
  const delayMs = Math.min(Math.max(channelWaitMs, scaled(serverFaultDelayMs(task.serverFaults + 1), limits)), since + failMs - now);
  return {
    type: 'requeue',
    delayMs,
    serverFault: true,
    upstream: { ...(task.upstream ?? { generation: 0, checkFailures: 0 }), unavailableSince: since },
    note: {
      level: 'warn',
      msg: 'no upstream could take the task; it waits in the queue without using an attempt',
      fields: { retryInMs: delayMs, waitingMs: now - since },
    },
  };
}

/** The upstream state once a channel answered: no longer waiting for one (G274). */
function withoutUnavailable(upstream: UpstreamState): UpstreamState {
  const { unavailableSince: _, ...rest } = upstream;
  return rest;
}
