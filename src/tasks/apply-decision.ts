/**
 * Writes a decision of step-outcome.ts through states.ts (G397): the one place a step's outcome
 * becomes a change of the task. Returns the task as written (undefined when the guard no longer
 * held: cancelled, or another worker holds it) and how long the worker should pause claiming.
 */
import type { Logger } from 'pino';
import type { TaskRecord, TaskResult, TaskStore, UpstreamState } from '../store/types.js';
import { expiryOf } from './expiry.js';
import type { Decision } from './step-outcome.js';
import { completeTask, failLapsedTask, failTask, recoverLapsedTask, requeueTask, saveUpstreamRef, scheduleCheck, startNewGeneration } from './states.js';

/** What applying needs: the store, the results' lifetime, the log; `workerId`: the lease holder (none: the lapsed-lease sweep). */
export interface ApplyDeps {
  store: TaskStore;
  videosResultTtlHours: number;
  log: Logger;
  workerId?: string;
}

/** What some transitions write besides the decision: the stored result, the started generation, the progress. */
export interface ApplyExtras {
  result?: TaskResult;
  /** The candidate that made the result, when it is not the one the task names. */
  completedBy?: string;
  started?: UpstreamState & { provider: string };
  progress?: number;
  /** More fields for the decision's log line. */
  logFields?: Record<string, unknown>;
}

export interface Applied {
  /** The task as written; undefined when nothing was written or the guard no longer held. */
  task: TaskRecord | undefined;
  /** How long this worker claims nothing (the gateway's own fault, G84), ms. */
  pauseMs: number | undefined;
}

export async function applyDecision(deps: ApplyDeps, task: TaskRecord, decision: Decision, now = Date.now(), extras: ApplyExtras = {}): Promise<Applied> {
  const written = await write(deps, task, decision, now, extras);
  const note = decision.note;
  if (note) deps.log[note.level]({ ...note.fields, ...extras.logFields }, note.msg);
  return { task: written, pauseMs: decision.type === 'requeue' && decision.pauseWorker ? decision.delayMs : undefined };
}

function write(deps: ApplyDeps, task: TaskRecord, d: Decision, now: number, extras: ApplyExtras): Promise<TaskRecord | undefined> {
  const { store, workerId } = deps;
  const expiry = (status: 'completed' | 'failed'): number | null => expiryOf(task.family, status, now, deps.videosResultTtlHours);
  if (workerId === undefined) {
    // the lapsed-lease sweep: guarded by the lapsed lease, not by a holder
    if (d.type === 'fail') return failLapsedTask(store, task, d.message, expiry('failed'), now);
    if (d.type === 'recover') return recoverLapsedTask(store, task, now);
    return Promise.resolve(undefined);
  }
  switch (d.type) {
    case 'complete':
      return completeTask(store, task, workerId, extras.result!, expiry('completed')!, now, extras.completedBy);
    case 'save-ref':
      return saveUpstreamRef(store, task, workerId, extras.started!, now + d.delayMs, extras.progress);
    case 'check-later':
      return scheduleCheck(store, task, workerId, now + d.delayMs, d.upstream, extras.progress);
    case 'requeue':
      return requeueTask(store, task, workerId, now + d.delayMs, {
        ...(d.refundAttempt && { refundAttempt: true }),
        ...(d.serverFault && { serverFault: true }),
        ...(d.error !== undefined && { error: d.error }),
        ...(d.upstream && { upstream: d.upstream }),
      });
    case 'new-generation':
      return startNewGeneration(store, task, workerId, d.provider, d.generation, now + d.delayMs, d.error);
    case 'fail':
      return failTask(store, task, workerId, d.message, expiry('failed'), now);
    case 'recover':
    case 'none':
      return Promise.resolve(undefined);
  }
}
