/**
 * The only code that changes a task's status. Each change is one conditional update on the store
 * (`UPDATE ... WHERE status IN (allowed) [AND lease_owner = me]`), so two workers can never both
 * finish a task, and a late worker cannot overwrite a cancel. Every function returns the updated
 * task, or undefined when the guard no longer held (someone else got there first). Each change won
 * is told to the listeners of that store (`onTransition`, G393): metrics observe them there.
 */
import { perSecondCharge } from '../credits/prices.js';
import type { Settlement, TaskGuard, TaskPatch, TaskPatchWithNote, TaskRecord, TaskResult, TaskStatus, TaskStore, UpstreamState } from '../store/types.js';

/** A change of a task won by this process: the task as it now is; `statusChanged` when the change set its status. */
export interface TaskTransition {
  task: TaskRecord;
  statusChanged: boolean;
}

export type TransitionListener = (transition: TaskTransition) => void;

/**
 * The listeners of a store, kept on the store object itself under a symbol: two gateways in one
 * process (tests) do not hear each other, and a view of the store that forwards its properties
 * (the runner's patient view, G258) shares them.
 */
const LISTENERS = Symbol('mediagate.transitionListeners');
type Listened = TaskStore & { [LISTENERS]?: Set<TransitionListener> };

/** Calls `listener` after every change of a task won through `store` (or a view of it) here; returns the unsubscribe function. */
export function onTransition(store: TaskStore, listener: TransitionListener): () => void {
  const listened = store as Listened;
  let set = listened[LISTENERS];
  if (!set) {
    set = new Set();
    Object.defineProperty(listened, LISTENERS, { value: set });
  }
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}

/** The one write of every transition: the conditional update, then the listeners when it was won. */
async function transition(store: TaskStore, id: string, guard: TaskGuard, patch: TaskPatchWithNote, settle?: Settlement): Promise<TaskRecord | undefined> {
  const task = await store.updateIf(id, guard, patch, settle);
  const set = task && (store as Listened)[LISTENERS];
  if (!task || !set) return task;
  for (const listener of set) {
    try {
      listener({ task, statusChanged: patch.status !== undefined });
    } catch {
      // an observer's fault is not the transition's: the change is written and stays
    }
  }
  return task;
}

/**
 * Every transition to a terminal status settles the task's hold in its own conditional update
 * (G201): a completed task's is captured (per-second models: for the length produced, never
 * above the hold), a failed or cancelled task's released. Money thus moves once, by the winner.
 */
const RELEASE: Settlement = { kind: 'release' };

function captureFor(task: TaskRecord, result: TaskResult): Settlement {
  if (!task.charge) return { kind: 'capture', amountMicro: 0 };
  return { kind: 'capture', amountMicro: result.actualDuration === undefined ? task.charge.holdMicro : perSecondCharge(task.charge, result.actualDuration) };
}

/**
 * Whether a task has reached a status it never leaves (completed, failed, cancelled). Each of them
 * sets `progress` to 100: nothing more will happen to the task (G117).
 */
export const isFinished = (status: TaskStatus): boolean => status !== 'queued' && status !== 'processing';

/** queued -> processing: the oldest claimable task of these providers, leased to `workerId`. */
export function claimNextTask(
  store: TaskStore,
  providers: readonly string[],
  workerId: string,
  leaseMs: number,
  now = Date.now(),
): Promise<TaskRecord | undefined> {
  return store.claimNext(providers, workerId, now, now + leaseMs);
}

/** processing -> completed, only by the lease holder; `provider`: the candidate that made the result, when it is not the one the task names. */
export function completeTask(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  result: TaskResult,
  expiresAt: number,
  now = Date.now(),
  provider?: string,
): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: workerId },
    {
      ...(provider !== undefined && { provider }),
      status: 'completed',
      progress: 100,
      result,
      error: null,
      finishedAt: now,
      leaseOwner: null,
      leaseExpiresAt: null,
      expiresAt,
    },
    captureFor(task, result),
  );
}

/** What every transition to `failed` writes: the error, the end, no lease (its hold is released with it). */
const failed = (error: string, expiresAt: number | null, now: number): TaskPatch => ({
  status: 'failed',
  progress: 100,
  error,
  finishedAt: now,
  leaseOwner: null,
  leaseExpiresAt: null,
  expiresAt,
});

/** processing -> failed, only by the lease holder. */
export function failTask(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  error: string,
  expiresAt: number | null,
  now = Date.now(),
): Promise<TaskRecord | undefined> {
  return transition(store, task.id, { statusIn: ['processing'], leaseOwner: workerId }, failed(error, expiresAt, now), RELEASE);
}

/**
 * processing -> queued by the lease holder: try again after `runAfter`; `error`: why the attempt
 * ended, kept for the task's timeline (G318). A retry after a failure
 * keeps the attempt it used and ends a run of the gateway's own faults (the attempt ran); a
 * graceful shutdown gives the attempt back (`refundAttempt`), and so does the gateway's own fault,
 * which is counted apart, in a row (`serverFault`, G84). `upstream`: the task's upstream state
 * to keep instead (when no channel could take it, since when: G274).
 */
export function requeueTask(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  runAfter: number,
  how: { refundAttempt?: boolean; serverFault?: boolean; upstream?: UpstreamState; error?: string } = {},
): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: workerId },
    {
      status: 'queued',
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter,
      attemptError: how.error ?? null,
      ...(how.upstream && { upstream: how.upstream }),
      ...((how.refundAttempt || how.serverFault) && { attempts: Math.max(0, task.attempts - 1) }),
      ...(how.serverFault ? { serverFaults: task.serverFaults + 1 } : !how.refundAttempt && { serverFaults: 0 }),
    },
  );
}

/**
 * processing (lease lapsed: its worker died) -> queued, unless the worker renewed meanwhile. A task
 * with a generation at an upstream stays processing and is checked again at once: the generation is
 * never started twice (G86).
 */
export function recoverLapsedTask(store: TaskStore, task: TaskRecord, now = Date.now()): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: task.leaseOwner ?? '', leaseExpiredBefore: now },
    {
      ...(task.upstream?.ref ? {} : { status: 'queued' as const, attemptError: 'the worker running it stopped (its lease ran out)' }),
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter: now,
    },
  );
}

/**
 * processing, leased -> processing with a generation at an upstream, no lease, checked from
 * `runAfter` on by any worker: the reference of the generation a provider just started is saved,
 * under the lease of the worker that started it, before anything else happens (G86). `provider`:
 * the channel that accepted it (checks and cancel go there). An accepted create ends a run of
 * refusals (G91): they count in a row.
 */
export function saveUpstreamRef(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  upstream: UpstreamState & { provider: string },
  runAfter: number,
  progress = task.progress,
): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: workerId },
    {
      upstream,
      provider: upstream.provider,
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter,
      progress: Math.max(task.progress, progress),
      serverFaults: 0,
    },
  );
}

/** processing, leased for a check -> processing, waiting for the next check at `runAfter` (progress only rises). */
export function scheduleCheck(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  runAfter: number,
  upstream: UpstreamState,
  progress = task.progress,
): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: workerId },
    {
      upstream,
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter,
      progress: Math.max(task.progress, progress),
    },
  );
}

/**
 * processing, waiting for a check of generation `upstreamId` -> due now: its upstream said that
 * generation ended (a verified provider callback, G158). Only while no worker holds the task and
 * its current generation is still that one; the check then reads the outcome from the upstream.
 */
export function checkSooner(store: TaskStore, taskId: string, upstreamId: string, now = Date.now()): Promise<TaskRecord | undefined> {
  return transition(store, taskId, { statusIn: ['processing'], unleased: true, upstreamId }, { runAfter: now });
}

/**
 * processing -> queued for a new generation: the one at the upstream failed in a way another may
 * not (its attempt is used). The next start goes through the model's route from its first
 * candidate (`provider`) with the next generation number (`generation`, step-outcome.ts decides
 * it), so its create is a new one (G86).
 */
export function startNewGeneration(
  store: TaskStore,
  task: TaskRecord,
  workerId: string,
  provider: string,
  generation: number,
  runAfter: number,
  error?: string,
): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: workerId },
    {
      status: 'queued',
      attemptError: error ?? null,
      provider,
      upstream: { generation, checkFailures: 0 },
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter,
    },
  );
}

/** processing (lease lapsed, no attempts left) -> failed. */
export function failLapsedTask(store: TaskStore, task: TaskRecord, error: string, expiresAt: number | null, now = Date.now()): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['processing'], leaseOwner: task.leaseOwner ?? '', leaseExpiredBefore: now },
    failed(error, expiresAt, now),
    RELEASE,
  );
}

/**
 * queued (since before the queue TTL) -> failed: no worker started it in time (G249); its hold is
 * released. Only while it is still queued: a worker that claims it first runs it.
 */
export function expireQueuedTask(
  store: TaskStore,
  task: TaskRecord,
  error: string,
  expiresAt: number | null,
  now = Date.now(),
): Promise<TaskRecord | undefined> {
  return transition(store, task.id, { statusIn: ['queued'] }, failed(error, expiresAt, now), RELEASE);
}

/** queued | processing -> cancelled (the caller asked); the running worker sees it and stops. */
export function cancelTask(store: TaskStore, task: TaskRecord, expiresAt: number | null, now = Date.now()): Promise<TaskRecord | undefined> {
  return transition(
    store,
    task.id,
    { statusIn: ['queued', 'processing'] },
    {
      status: 'cancelled',
      progress: 100,
      error: null,
      finishedAt: now,
      leaseOwner: null,
      leaseExpiresAt: null,
      expiresAt,
    },
    RELEASE,
  );
}
