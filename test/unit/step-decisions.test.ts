/**
 * The task engine's decision table (G397-G402): every step outcome against the task's counters
 * (attempts, server faults, check failures, reply problems, since when no channel took it, its
 * generation), each row the transition `decide` returns and its delay. Pure: no store, no clock
 * (the time and the jitter are given), milliseconds to run.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { GenerationKeyConflict, MAX_REPLY_PROBLEMS, UnexpectedReply, UnrecoverableError } from '../../src/providers/types.js';
import type { TaskRecord, UpstreamState } from '../../src/store/types.js';
import { MAX_SERVER_FAULTS } from '../../src/tasks/backoff.js';
import { decide, delayOf, type Decision, type StepLimits, type StepOutcome } from '../../src/tasks/step-outcome.js';

const NOW = 1_000_000_000;
const FAIL_MS = 1800_000;
const LIMITS: StepLimits = { now: NOW, maxAttempts: 3, attemptTimeoutMs: 1800_000, unavailableFailMs: FAIL_MS, random: () => 0.5 };
/** A check of a pic generation waits 2-5 s: with the jitter at its middle, 3.5 s (doubled per failure in a row). */
const CHECK_MS = 3500;
const REF = { id: 'up-1' };
const CHECKING: UpstreamState = { generation: 2, provider: 'relay-a', ref: REF, startedAt: NOW - 60_000, checkFailures: 0 };

function task(over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id: 't1',
    ownerKeyId: 'k1',
    family: 'pic',
    form: null,
    model: 'pic-1',
    provider: 'relay-b',
    request: {
      params: {},
      route: [
        { provider: 'relay-a', priority: 0, weight: 1 },
        { provider: 'relay-b', priority: 1, weight: 1 },
      ],
    } as unknown as TaskRecord['request'],
    status: 'processing',
    progress: 0,
    result: null,
    error: null,
    amount: 1,
    charge: null,
    createdAt: NOW - 120_000,
    updatedAt: NOW,
    startedAt: NOW - 60_000,
    finishedAt: null,
    attempts: 1,
    serverFaults: 0,
    upstream: null,
    leaseOwner: 'w1',
    leaseExpiresAt: NOW + 30_000,
    runAfter: 0,
    expiresAt: null,
    callbackUrl: null,
    ...over,
  };
}

const enospc = Object.assign(new Error('write failed'), { code: 'ENOSPC' });

interface Row {
  name: string;
  outcome: StepOutcome;
  task?: Partial<TaskRecord>;
  limits?: Partial<StepLimits>;
  /** The decision without its log line. */
  want: Omit<Decision, 'note'> & Record<string, unknown>;
  delay: number;
}

const ROWS: Row[] = [
  // the generation made or started
  { name: 'completed: the task completes', outcome: { kind: 'completed' }, want: { type: 'complete' }, delay: 0 },
  {
    name: 'started: the reference is saved, the first check after one polling interval',
    outcome: { kind: 'started' },
    want: { type: 'save-ref', delayMs: CHECK_MS },
    delay: CHECK_MS,
  },
  {
    name: 'started at a provider with pollSeconds 10: checked after 10 s',
    outcome: { kind: 'started' },
    limits: { pollSeconds: 10 },
    want: { type: 'save-ref', delayMs: 10_000 },
    delay: 10_000,
  },
  // checks
  {
    name: 'pending: checked again, check failures and reply problems cleared',
    outcome: { kind: 'pending' },
    task: { upstream: { ...CHECKING, checkFailures: 3, replyProblems: 2 } },
    want: { type: 'check-later', delayMs: CHECK_MS, upstream: { ...CHECKING, checkFailures: 0 } },
    delay: CHECK_MS,
  },
  {
    name: 'pending with Retry-After 20 s: not checked sooner',
    outcome: { kind: 'pending', retryAfterMs: 20_000 },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 20_000, upstream: CHECKING },
    delay: 20_000,
  },
  {
    name: 'check unanswered (first): checked again after twice the interval',
    outcome: { kind: 'check-unanswered' },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 2 * CHECK_MS, upstream: { ...CHECKING, checkFailures: 1 } },
    delay: 2 * CHECK_MS,
  },
  {
    name: 'check unanswered (8th in a row): the backoff is capped at 5 min',
    outcome: { kind: 'check-unanswered' },
    task: { upstream: { ...CHECKING, checkFailures: 7 } },
    want: { type: 'check-later', delayMs: 300_000, upstream: { ...CHECKING, checkFailures: 8 } },
    delay: 300_000,
  },
  {
    name: 'check unanswered with Retry-After 10 min: not checked sooner',
    outcome: { kind: 'check-unanswered', retryAfterMs: 600_000 },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 600_000, upstream: { ...CHECKING, checkFailures: 1 } },
    delay: 600_000,
  },
  {
    name: 'result not fetchable yet: checked again, counted as a failed check',
    outcome: { kind: 'result-not-ready' },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 2 * CHECK_MS, upstream: { ...CHECKING, checkFailures: 1 } },
    delay: 2 * CHECK_MS,
  },
  {
    name: 'reply problem (first): the same generation checked again',
    outcome: { kind: 'reply-problem', error: new UnexpectedReply('not JSON') },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 2 * CHECK_MS, upstream: { ...CHECKING, replyProblems: 1 } },
    delay: 2 * CHECK_MS,
  },
  {
    name: `reply problem (${MAX_REPLY_PROBLEMS}th in a row): cancelled at the upstream, failed`,
    outcome: { kind: 'reply-problem', error: new UnexpectedReply('not JSON') },
    task: { upstream: { ...CHECKING, replyProblems: MAX_REPLY_PROBLEMS - 1 } },
    want: { type: 'fail', message: `not JSON (at ${MAX_REPLY_PROBLEMS} checks in a row); the task was given up`, cancelUpstream: true },
    delay: 0,
  },
  {
    name: 'a check that can never be made (the reference cannot be followed): cancelled at the upstream, failed at once',
    outcome: { kind: 'unfollowable', error: new UnrecoverableError('cannot follow request r1') },
    task: { upstream: { ...CHECKING, checkFailures: 3 } },
    want: { type: 'fail', message: 'cannot follow request r1', cancelUpstream: true },
    delay: 0,
  },
  // a failed start (or storing its result)
  {
    name: 'failed, attempt 1 of 3: requeued after ~1 s',
    outcome: { kind: 'failed', error: new Error('boom') },
    want: { type: 'requeue', delayMs: 1000, error: 'generation failed: boom' },
    delay: 1000,
  },
  {
    name: 'failed, attempt 2 of 3: requeued after ~2 s',
    outcome: { kind: 'failed', error: new Error('boom') },
    task: { attempts: 2 },
    want: { type: 'requeue', delayMs: 2000, error: 'generation failed: boom' },
    delay: 2000,
  },
  {
    name: 'failed, attempt 2 of 3, backoffScale 0.05 (G278): requeued after ~100 ms',
    outcome: { kind: 'failed', error: new Error('boom') },
    task: { attempts: 2 },
    limits: { backoffScale: 0.05 },
    want: { type: 'requeue', delayMs: 100, error: 'generation failed: boom' },
    delay: 100,
  },
  {
    name: 'failed, attempt 3 of 3: failed',
    outcome: { kind: 'failed', error: new Error('boom') },
    task: { attempts: 3 },
    want: { type: 'fail', message: 'generation failed: boom' },
    delay: 0,
  },
  {
    name: 'failed for good (unrecoverable) at attempt 1: failed',
    outcome: { kind: 'failed', error: new UnrecoverableError('prompt refused') },
    want: { type: 'fail', message: 'prompt refused' },
    delay: 0,
  },
  {
    name: 'failed with a non-retryable error: failed',
    outcome: { kind: 'failed', error: new AppError('invalid_request', 'bad size') },
    want: { type: 'fail', message: 'bad size' },
    delay: 0,
  },
  {
    name: 'failed after waiting for a channel: requeued, no longer waiting for one',
    outcome: { kind: 'failed', error: new Error('boom') },
    task: { upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW - 5000 } },
    want: { type: 'requeue', delayMs: 1000, error: 'generation failed: boom', upstream: { generation: 0, checkFailures: 0 } },
    delay: 1000,
  },
  {
    name: "failed with the gateway's own fault (ENOSPC): a server fault",
    outcome: { kind: 'failed', error: enospc },
    task: { attempts: 3 },
    want: { type: 'requeue', delayMs: 2000, serverFault: true, error: 'not run: it was short of a resource of its own (ENOSPC)', pauseWorker: true },
    delay: 2000,
  },
  // the gateway's own faults
  {
    name: 'server fault (first): requeued without an attempt, the worker paused 2 s',
    outcome: { kind: 'server-fault', error: enospc },
    want: { type: 'requeue', delayMs: 2000, serverFault: true, error: 'not run: it was short of a resource of its own (ENOSPC)', pauseWorker: true },
    delay: 2000,
  },
  {
    name: `server fault (${MAX_SERVER_FAULTS}th): still requeued, the pause capped at 60 s`,
    outcome: { kind: 'server-fault', error: enospc },
    task: { serverFaults: MAX_SERVER_FAULTS - 1 },
    want: { type: 'requeue', delayMs: 60_000, serverFault: true, error: 'not run: it was short of a resource of its own (ENOSPC)', pauseWorker: true },
    delay: 60_000,
  },
  {
    name: `server fault (${MAX_SERVER_FAULTS + 1}th): failed, saying so`,
    outcome: { kind: 'server-fault', error: enospc },
    task: { serverFaults: MAX_SERVER_FAULTS },
    want: {
      type: 'fail',
      message: `the gateway could not run this task: it was short of a resource of its own (ENOSPC) each of the last ${MAX_SERVER_FAULTS} times it tried; nothing in the request caused it, submit it again`,
    },
    delay: 0,
  },
  {
    name: 'server fault without a code: named unknown',
    outcome: { kind: 'server-fault', error: new Error('mkdtemp') },
    want: { type: 'requeue', delayMs: 2000, serverFault: true, error: 'not run: it was short of a resource of its own (unknown)', pauseWorker: true },
    delay: 2000,
  },
  // no channel could take it
  {
    name: 'unavailable (first): waits in the queue from now, no attempt used',
    outcome: { kind: 'unavailable', channelWaitMs: 0 },
    want: { type: 'requeue', delayMs: 2000, serverFault: true, upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW } },
    delay: 2000,
  },
  {
    name: 'unavailable, a channel paused for 30 s: waits for it',
    outcome: { kind: 'unavailable', channelWaitMs: 30_000 },
    task: { upstream: { generation: 1, checkFailures: 0, unavailableSince: NOW - 60_000 }, serverFaults: 2 },
    want: { type: 'requeue', delayMs: 30_000, serverFault: true, upstream: { generation: 1, checkFailures: 0, unavailableSince: NOW - 60_000 } },
    delay: 30_000,
  },
  {
    name: 'unavailable, 5 s before the fail setting: looked at again by its deadline',
    outcome: { kind: 'unavailable', channelWaitMs: 60_000 },
    task: { upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW - FAIL_MS + 5000 } },
    want: { type: 'requeue', delayMs: 5000, serverFault: true, upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW - FAIL_MS + 5000 } },
    delay: 5000,
  },
  {
    name: 'unavailable for the fail setting: failed, naming no upstream',
    outcome: { kind: 'unavailable', channelWaitMs: 0 },
    task: { upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW - FAIL_MS } },
    want: {
      type: 'fail',
      message:
        'no upstream of model pic-1 could take this task for 1800 s (each refused it or is paused after repeated faults); nothing in the request caused it, submit it again later',
    },
    delay: 0,
  },
  // the runner's own waits scaled (tests, G267): retries, server faults, a channel's wait; never a channel's open period nor a check's interval
  {
    name: 'backoffScale 0.1: a retry after a tenth of ~1 s',
    outcome: { kind: 'failed', error: new Error('boom') },
    limits: { backoffScale: 0.1 },
    want: { type: 'requeue', delayMs: 100, error: 'generation failed: boom' },
    delay: 100,
  },
  {
    name: 'backoffScale 0.1: a server fault pauses the worker a tenth of 2 s',
    outcome: { kind: 'server-fault', error: enospc },
    limits: { backoffScale: 0.1 },
    want: { type: 'requeue', delayMs: 200, serverFault: true, error: 'not run: it was short of a resource of its own (ENOSPC)', pauseWorker: true },
    delay: 200,
  },
  {
    name: 'backoffScale 0.1: unavailable waits a tenth of 2 s',
    outcome: { kind: 'unavailable', channelWaitMs: 0 },
    limits: { backoffScale: 0.1 },
    want: { type: 'requeue', delayMs: 200, serverFault: true, upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW } },
    delay: 200,
  },
  {
    name: 'backoffScale 0.1: a channel paused for 30 s (a Retry-After, an open circuit) is still waited for whole',
    outcome: { kind: 'unavailable', channelWaitMs: 30_000 },
    limits: { backoffScale: 0.1 },
    want: { type: 'requeue', delayMs: 30_000, serverFault: true, upstream: { generation: 0, checkFailures: 0, unavailableSince: NOW } },
    delay: 30_000,
  },
  {
    name: 'backoffScale 0.1: a new generation after a tenth of ~1 s',
    outcome: { kind: 'generation-timed-out' },
    task: { upstream: CHECKING },
    limits: { backoffScale: 0.1 },
    want: { type: 'new-generation', delayMs: 100, provider: 'relay-a', generation: 3, error: 'generation did not finish within 1800 s (attempt 1 of 3)' },
    delay: 100,
  },
  {
    name: 'backoffScale 0.1: the next check is not scaled (pollSeconds sets it)',
    outcome: { kind: 'check-unanswered' },
    task: { upstream: CHECKING },
    limits: { backoffScale: 0.1 },
    want: { type: 'check-later', delayMs: 2 * CHECK_MS, upstream: { ...CHECKING, checkFailures: 1 } },
    delay: 2 * CHECK_MS,
  },
  // the generation at the upstream
  {
    name: "generation failed, attempt 1 of 3: generation 3 from the route's first candidate",
    outcome: { kind: 'generation-failed', error: new AppError('upstream_error', 'nsfw filter', { retryable: true }) },
    task: { upstream: CHECKING },
    want: { type: 'new-generation', delayMs: 1000, provider: 'relay-a', generation: 3, error: 'nsfw filter' },
    delay: 1000,
  },
  {
    name: 'generation failed before any generation number: generation 1',
    outcome: { kind: 'generation-failed', error: new GenerationKeyConflict('key reused') },
    want: { type: 'new-generation', delayMs: 1000, provider: 'relay-a', generation: 1, error: 'key reused' },
    delay: 1000,
  },
  {
    name: 'generation failed, backoffScale 0.05 (G278): the new generation after ~50 ms',
    outcome: { kind: 'generation-failed', error: new GenerationKeyConflict('key reused') },
    limits: { backoffScale: 0.05 },
    want: { type: 'new-generation', delayMs: 50, provider: 'relay-a', generation: 1, error: 'key reused' },
    delay: 50,
  },
  {
    name: 'generation failed, attempt 3 of 3: failed',
    outcome: { kind: 'generation-failed', error: new AppError('upstream_error', 'nsfw filter', { retryable: true }) },
    task: { upstream: CHECKING, attempts: 3 },
    want: { type: 'fail', message: 'nsfw filter' },
    delay: 0,
  },
  {
    name: 'generation failed for good: failed at attempt 1',
    outcome: { kind: 'generation-failed', error: new UnrecoverableError('content policy') },
    task: { upstream: CHECKING },
    want: { type: 'fail', message: 'content policy' },
    delay: 0,
  },
  {
    name: 'generation timed out, attempt 1 of 3: a new generation',
    outcome: { kind: 'generation-timed-out' },
    task: { upstream: CHECKING },
    want: { type: 'new-generation', delayMs: 1000, provider: 'relay-a', generation: 3, error: 'generation did not finish within 1800 s (attempt 1 of 3)' },
    delay: 1000,
  },
  {
    name: 'generation timed out after failed checks, attempt 3 of 3: failed, saying the checks failed (G122)',
    outcome: { kind: 'generation-timed-out' },
    task: { upstream: { ...CHECKING, checkFailures: 2 }, attempts: 3 },
    want: { type: 'fail', message: 'generation did not finish within 1800 s (attempt 3 of 3); the last 2 checks of its status at the upstream failed' },
    delay: 0,
  },
  {
    name: "refused by every channel's mapping: failed at once",
    outcome: { kind: 'refused', error: new UnrecoverableError('size: not offered') },
    want: { type: 'fail', message: 'size: not offered' },
    delay: 0,
  },
  // stopped work
  { name: 'start stopped by a cancel: nothing written', outcome: { kind: 'stopped', reason: 'cancelled', checking: false }, want: { type: 'none' }, delay: 0 },
  {
    name: 'start stopped by a lost lease: nothing written',
    outcome: { kind: 'stopped', reason: 'lease-lost', checking: false },
    want: { type: 'none' },
    delay: 0,
  },
  {
    name: 'start stopped by a shutdown: requeued now, its attempt given back',
    outcome: { kind: 'stopped', reason: 'shutdown', checking: false },
    task: { attempts: 3 },
    want: { type: 'requeue', delayMs: 0, refundAttempt: true },
    delay: 0,
  },
  {
    name: 'start stopped by the attempt time limit, attempt 1 of 3: requeued',
    outcome: { kind: 'stopped', reason: 'attempt-timeout', checking: false, error: new Error('aborted') },
    want: { type: 'requeue', delayMs: 1000, error: 'generation did not finish within 1800 s (attempt 1 of 3)' },
    delay: 1000,
  },
  {
    name: 'start stopped by the attempt time limit, attempt 3 of 3: failed',
    outcome: { kind: 'stopped', reason: 'attempt-timeout', checking: false },
    task: { attempts: 3 },
    want: { type: 'fail', message: 'generation did not finish within 1800 s (attempt 3 of 3)' },
    delay: 0,
  },
  {
    name: 'check stopped by a shutdown: due again now, the generation unchanged',
    outcome: { kind: 'stopped', reason: 'shutdown', checking: true },
    task: { upstream: CHECKING },
    want: { type: 'check-later', delayMs: 0, upstream: CHECKING },
    delay: 0,
  },
  {
    name: 'check stopped by a cancel: nothing written',
    outcome: { kind: 'stopped', reason: 'cancelled', checking: true },
    task: { upstream: CHECKING },
    want: { type: 'none' },
    delay: 0,
  },
  {
    name: 'check stopped by a lost lease: nothing written',
    outcome: { kind: 'stopped', reason: 'lease-lost', checking: true },
    task: { upstream: CHECKING },
    want: { type: 'none' },
    delay: 0,
  },
  // lapsed leases (the sweep)
  { name: 'lease lapsed during a start, attempt 1 of 3: back to the queue', outcome: { kind: 'lease-lapsed' }, want: { type: 'recover' }, delay: 0 },
  {
    name: 'lease lapsed during a start, attempt 3 of 3: failed',
    outcome: { kind: 'lease-lapsed' },
    task: { attempts: 3 },
    want: { type: 'fail', message: 'generation did not finish: the worker running it stopped responding 3 time(s); giving up' },
    delay: 0,
  },
  {
    name: 'lease lapsed during a check, attempt 3 of 3: back to waiting for its check (never started twice)',
    outcome: { kind: 'lease-lapsed' },
    task: { upstream: CHECKING, attempts: 3 },
    want: { type: 'recover' },
    delay: 0,
  },
];

describe('the decision table of the task engine (G397)', () => {
  it.each(ROWS)('$name', (row) => {
    const decision = decide(row.outcome, task(row.task), { ...LIMITS, ...row.limits });
    const { note: _, ...transition } = decision;
    expect(transition).toEqual(row.want);
    expect(delayOf(decision)).toBe(row.delay);
  });

  it('covers every kind of outcome', () => {
    const kinds = new Set(ROWS.map((r) => r.outcome.kind));
    const all: Array<StepOutcome['kind']> = [
      'completed',
      'started',
      'pending',
      'check-unanswered',
      'result-not-ready',
      'reply-problem',
      'unfollowable',
      'failed',
      'generation-failed',
      'generation-timed-out',
      'refused',
      'server-fault',
      'unavailable',
      'stopped',
      'lease-lapsed',
    ];
    expect([...kinds].sort()).toEqual([...all].sort());
  });

  it('is pure: the same outcome, task and limits give the same decision', () => {
    for (const row of ROWS) {
      const limits = { ...LIMITS, ...row.limits };
      expect(decide(row.outcome, task(row.task), limits)).toEqual(decide(row.outcome, task(row.task), limits));
    }
  });
});
