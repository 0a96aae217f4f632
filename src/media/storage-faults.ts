/**
 * The one place that says whether a storage error means "the bucket cannot be reached now" (G260):
 * no connection (refused, reset, timed out, a name that does not resolve), or an answer of 5xx
 * (S3's `ServiceUnavailable`, `SlowDown`, `InternalError`). Such an error is the server's fault and
 * passes: `/files` and asset uploads answer 503 with `Retry-After`, a worker holding a finished
 * generation waits and uploads the same result again. A 4xx (a missing key, refused credentials) is
 * not classified here.
 */
import { S3StorageError } from './s3-storage-error.js';

/** Seconds a caller is told to wait before retrying a request the storage could not serve. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/** Whether `err` (or an error it wraps) says the storage cannot be reached now. */
export function isStorageUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    if (e instanceof S3StorageError) return e.status === undefined ? e.code !== 'AbortError' : e.status >= 500;
  }
  return false;
}
