import { UnrecoverableError } from '../providers/types.js';
import { AppError } from '../errors.js';

/** The one place that decides whether a failed attempt is retried, and when. */
export function shouldRetry(err: unknown, attempt: number, maxAttempts: number): boolean {
  if (attempt >= maxAttempts) return false;
  if (err instanceof UnrecoverableError) return false;
  if (err instanceof AppError) return err.retryable;
  return true;
}

/** Exponential backoff with jitter: ~1 s, 2 s, 4 s ... capped at 60 s. */
export function retryDelayMs(attempt: number, random = Math.random): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.75 + random() * 0.5));
}

/** The message stored in a failed task's `error`. */
export function failureMessage(err: unknown): string {
  if (err instanceof UnrecoverableError || err instanceof AppError) return err.message;
  if (err instanceof Error && err.message) return `generation failed: ${err.message}`;
  return 'generation failed';
}
