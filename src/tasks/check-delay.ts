/**
 * When to check a generation at an upstream again (G87): the contract's recommended
 * polling interval for the family, a random point within it (jitter, so thousands of tasks started
 * together do not check together), or the provider's configured `pollSeconds`; longer after checks
 * that failed; never sooner than the upstream's `Retry-After`.
 */
import type { FamilyId } from '../contract/families.js';
import type { PollSeconds } from '../providers/types.js';

/** The recommended polling intervals, seconds (docs/reference/api/README.md#retention-and-polling). */
export const RECOMMENDED_POLL_SECONDS: Record<FamilyId, readonly [min: number, max: number]> = {
  pic: [2, 5],
  clip: [30, 60],
  reel: [30, 60],
  videos: [30, 60],
  motion: [30, 60],
  'model-center': [5, 10],
};

/** The interval range for a family: the configured seconds with +-20% jitter, else the recommendation. */
export function pollRangeMs(family: FamilyId, configured?: PollSeconds): readonly [number, number] {
  const seconds = typeof configured === 'number' ? configured : configured?.[family];
  if (seconds !== undefined) return [seconds * 800, seconds * 1200];
  const [min, max] = RECOMMENDED_POLL_SECONDS[family];
  return [min * 1000, max * 1000];
}

/** The longest wait after failed checks, ms. */
export const MAX_CHECK_BACKOFF_MS = 5 * 60_000;

/**
 * The wait before the next check, ms: a random point of the family's range; doubled for each
 * check in a row that failed (up to {@link MAX_CHECK_BACKOFF_MS}); at least `retryAfterMs`.
 */
export function nextCheckDelayMs(
  family: FamilyId,
  options: { configured?: PollSeconds; failures?: number; retryAfterMs?: number } = {},
  random = Math.random,
): number {
  const [min, max] = pollRangeMs(family, options.configured);
  let delay = min + (max - min) * random();
  if (options.failures) delay = Math.min(MAX_CHECK_BACKOFF_MS, delay * 2 ** options.failures);
  return Math.round(Math.max(delay, options.retryAfterMs ?? 0));
}
