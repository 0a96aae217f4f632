import { UnrecoverableError } from '../providers/types.js';
import { AppError } from '../errors.js';
import { S3StorageError } from '../media/s3-storage-error.js';

/**
 * Whether a failed attempt may be retried (the error and the attempts left). The arithmetic of
 * retries and server faults lives here; what happens to the task is decided by step-outcome.ts (G397).
 */
export function shouldRetry(err: unknown, attempt: number, maxAttempts: number): boolean {
  if (attempt >= maxAttempts) return false;
  if (err instanceof UnrecoverableError) return false;
  if (err instanceof AppError) return err.retryable;
  return true;
}

/** The first retry's delay before jitter, ms. */
const RETRY_BASE_MS = 1000;

/** Exponential backoff with jitter: ~1 s, 2 s, 4 s ... capped at 60 s (tests scale it: G267). */
export function retryDelayMs(attempt: number, random = Math.random): number {
  const base = Math.min(60_000, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.75 + random() * 0.5));
}

/**
 * errno codes that mean the gateway itself is short of a resource (disk, descriptors, memory,
 * processes) or its own storage is broken: not the task's fault, so not one of its attempts (G84).
 */
const SERVER_FAULT_CODES = new Set(['EMFILE', 'ENFILE', 'ENOSPC', 'EDQUOT', 'ENOMEM', 'EAGAIN', 'EROFS', 'EIO']);
/** The same conditions as tools report them in messages (ffmpeg's stderr, libvips). */
const SERVER_FAULT_TEXT: ReadonlyArray<[RegExp, string]> = [
  [/No space left on device/i, 'ENOSPC'],
  [/Too many open files/i, 'EMFILE'],
  [/Cannot allocate memory/i, 'ENOMEM'],
  [/Disk quota exceeded/i, 'EDQUOT'],
];

/**
 * The errno code when `err` (or an error it wraps) is the gateway's own resource fault, else
 * undefined. Messages are read only of errors of the gateway's own tools (ffmpeg, libvips), never
 * of errors that describe an upstream's answer (AppError, UnrecoverableError), which may quote an
 * upstream's own "No space left on device".
 */
export function serverFaultOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && SERVER_FAULT_CODES.has(code)) return code;
    if (e instanceof AppError || e instanceof UnrecoverableError) continue;
    const text = `${e.message} ${(e as { stderr?: unknown }).stderr ?? ''}`;
    const found = SERVER_FAULT_TEXT.find(([re]) => re.test(text));
    if (found) return found[1];
  }
  return undefined;
}

/** How many times a task goes back to the queue for the gateway's own faults before it fails. */
export const MAX_SERVER_FAULTS = 20;

/** The pause after the `n`th server fault of a task (1-based): 2 s, 4 s, ... capped at 60 s (~15 min for all 20). */
export function serverFaultDelayMs(n: number): number {
  return Math.min(60_000, 2000 * 2 ** Math.max(0, n - 1));
}

/**
 * The message stored in a failed task's `error`. A fault of the gateway's own file storage is said
 * in words that name no bucket, host, port or path (G263: the log has those).
 */
export function failureMessage(err: unknown): string {
  if (hasStorageError(err)) return 'the gateway could not store the result in its file storage';
  if (err instanceof UnrecoverableError || err instanceof AppError) return err.message;
  if (err instanceof Error && err.message) return `generation failed: ${err.message}`;
  return 'generation failed';
}

/** Whether `err` (or an error it wraps) is a failed request to the bucket, of any kind. */
function hasStorageError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) if (e instanceof S3StorageError) return true;
  return false;
}
