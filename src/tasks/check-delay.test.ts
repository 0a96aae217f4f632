import { describe, expect, it } from 'vitest';
import { MAX_CHECK_BACKOFF_MS, nextCheckDelayMs, pollRangeMs } from './check-delay.js';

describe('check delays (G87)', () => {
  it.each([
    ['pic', 2000, 5000],
    ['clip', 30_000, 60_000],
    ['reel', 30_000, 60_000],
    ['videos', 30_000, 60_000],
    ['motion', 30_000, 60_000],
    ['model-center', 5000, 10_000],
  ] as const)("%s: within the contract's recommended interval", (family, min, max) => {
    expect(pollRangeMs(family)).toEqual([min, max]);
    expect(nextCheckDelayMs(family, {}, () => 0)).toBe(min);
    expect(nextCheckDelayMs(family, {}, () => 0.999999)).toBeLessThanOrEqual(max);
    expect(nextCheckDelayMs(family, {}, () => 0.5)).toBe((min + max) / 2);
  });

  it('configured pollSeconds: one number, or per family, with +-20% jitter', () => {
    expect(pollRangeMs('clip', 1)).toEqual([800, 1200]);
    expect(pollRangeMs('clip', { pic: 1 })).toEqual([30_000, 60_000]);
    expect(pollRangeMs('pic', { pic: 1 })).toEqual([800, 1200]);
  });

  it('backs off after failed checks, up to a bound, and never checks before Retry-After', () => {
    expect(nextCheckDelayMs('pic', { configured: 1, failures: 1 }, () => 0.5)).toBe(2000);
    expect(nextCheckDelayMs('pic', { configured: 1, failures: 3 }, () => 0.5)).toBe(8000);
    expect(nextCheckDelayMs('clip', { failures: 10 }, () => 0.5)).toBe(MAX_CHECK_BACKOFF_MS);
    expect(nextCheckDelayMs('pic', { configured: 1, retryAfterMs: 30_000 }, () => 0.5)).toBe(30_000);
  });
});
