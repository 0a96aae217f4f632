/**
 * The task store as one piece of work sees it while it holds a task (G258): a state change that
 * meets an unreachable database (isStoreUnavailable) is not an error of the task. The worker keeps
 * what it has (an upstream reference just returned, a stored result) and writes the same change
 * again, waiting longer each time, until the database answers: no attempt is used, no generation
 * is started twice, nothing made is thrown away. Only a shutdown ends the wait (the caller's
 * `giveUp`), and then the error is the caller's to handle.
 *
 * A write whose connection broke after the database received it may have been applied: if the
 * retry's guard then fails, the task is read, and when it already shows the change (its status,
 * result and upstream reference), that is the answer, so a completed task's files are never
 * discarded as "no longer ours".
 */
import type { Logger } from 'pino';
import { isStoreUnavailable } from '../store/faults.js';
import type { TaskPatch, TaskRecord, TaskStore } from '../store/types.js';

/** Waits between tries of a write the database did not take: doubling from the first, up to the last. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

export interface PatienceOptions {
  log: Pick<Logger, 'warn' | 'info'>;
  /** True once the wait must end (shutdown): the last error is thrown. */
  giveUp: () => boolean;
  /** Told of every failure that is the database's (the runner then holds its lapsed-lease sweep back). */
  onStoreFault?: (err: unknown) => void;
  /** Waits `ms` (tests step it). */
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `op` until it resolves, trying again while it fails because the database cannot be reached. */
export async function untilStoreAnswers<T>(op: () => Promise<T>, options: PatienceOptions, what: string): Promise<{ value: T; retried: boolean }> {
  const { log, giveUp, onStoreFault, sleep = sleepFor } = options;
  let wait = FIRST_WAIT_MS;
  let retried = false;
  for (;;) {
    try {
      const value = await op();
      if (retried) log.info({ what }, 'the database answers again: written');
      return { value, retried };
    } catch (err) {
      if (!isStoreUnavailable(err) || giveUp()) throw err;
      onStoreFault?.(err);
      if (!retried) log.warn({ err: (err as Error).message, what }, 'the database cannot be reached: keeping the work and writing again when it answers');
      retried = true;
      await sleep(wait);
      wait = Math.min(LONGEST_WAIT_MS, wait * 2);
    }
  }
}

/** Whether `current` already shows what `patch` writes (the fields that say which change it was). */
function shows(current: TaskRecord, patch: TaskPatch): boolean {
  if (patch.status !== undefined && current.status !== patch.status) return false;
  if (patch.result !== undefined && JSON.stringify(current.result) !== JSON.stringify(patch.result)) return false;
  if (patch.upstream !== undefined && JSON.stringify(current.upstream) !== JSON.stringify(patch.upstream)) return false;
  if (patch.error !== undefined && current.error !== patch.error) return false;
  if (patch.leaseOwner !== undefined && current.leaseOwner !== patch.leaseOwner) return false;
  return true;
}

/** `store` with its conditional updates (every state change) made patient; everything else as it is. */
export function patientTaskStore(store: TaskStore, options: PatienceOptions): TaskStore {
  const updateIf: TaskStore['updateIf'] = async (id, guard, patch, settle) => {
    const { value, retried } = await untilStoreAnswers(() => store.updateIf(id, guard, patch, settle), options, 'a change of the task');
    if (value || !retried) return value;
    // the first try may have been applied before its connection broke
    const { value: current } = await untilStoreAnswers(() => store.get(id), options, 'a read of the task');
    return current && shows(current, patch) ? current : undefined;
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'updateIf') return updateIf;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
