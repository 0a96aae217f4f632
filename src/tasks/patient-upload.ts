/**
 * Storing a finished generation's result while the file storage cannot be reached (G261): the
 * worker keeps the result it holds and uploads the same files again, waiting longer each time,
 * until the storage takes them or the work is stopped (shutdown, cancel, a lost lease, the attempt's
 * time limit). No new generation is started and no attempt is used: the storage's outage is the
 * server's fault, not the task's. Any other failure is the caller's to judge.
 */
import type { Logger } from 'pino';
import { isStorageUnavailable } from '../media/storage-faults.js';
import type { ProviderOutput } from '../providers/types.js';
import type { ResultStorage, StoredOutput } from './result-storage.js';

const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 5_000;

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function storeResultPatiently(
  results: Pick<ResultStorage, 'store'>,
  taskId: string,
  output: ProviderOutput,
  signal: AbortSignal,
  log: Pick<Logger, 'warn' | 'info'>,
): Promise<StoredOutput> {
  let wait = FIRST_WAIT_MS;
  let tries = 0;
  for (;;) {
    try {
      const stored = await results.store(taskId, output, signal);
      if (tries > 0) log.info({ tries: tries + 1 }, 'the file storage answers again: result stored');
      return stored;
    } catch (err) {
      if (signal.aborted || !isStorageUnavailable(err)) throw err;
      tries++;
      // the bucket and the reason go to the log only; the caller never sees them
      if (tries === 1) log.warn({ err: (err as Error).message }, 'the file storage cannot be reached: keeping the result and storing it again when it answers');
      await pause(wait, signal);
      wait = Math.min(LONGEST_WAIT_MS, wait * 2);
      if (signal.aborted) throw err;
    }
  }
}
