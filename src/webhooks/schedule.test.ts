import { describe, expect, it } from 'vitest';
import { afterFailure, retryDelayMs } from './schedule.js';

const DEFAULTS = { timeoutMs: 15_000, firstRetryMs: 5000, maxRetryMs: 3_600_000, retryForMs: 86_400_000 };

describe('webhook retry schedule (G212)', () => {
  it('5 s doubling after each failed attempt, capped at 1 h', () => {
    expect([1, 2, 3, 4, 10, 11, 12, 50].map((n) => retryDelayMs(DEFAULTS, n))).toEqual([
      5000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
  });

  it('jitter keeps each wait within +-20 %', () => {
    expect(afterFailure(DEFAULTS, 3, 0, 1000, 0)).toEqual({ status: 'pending', nextAttemptAt: 1000 + 16_000 });
    expect(afterFailure(DEFAULTS, 3, 0, 1000, 0.999999)).toEqual({ status: 'pending', nextAttemptAt: 1000 + 24_000 });
  });

  it('retries for at least 24 h (about 34 attempts with the defaults, whatever the jitter), then fails', () => {
    for (const random of [0, 0.5, 0.999999]) {
      let now = 0;
      let attempts = 0;
      for (;;) {
        attempts++;
        const outcome = afterFailure(DEFAULTS, attempts, 0, now, random);
        if (outcome.status !== 'pending') break;
        now = outcome.nextAttemptAt;
      }
      expect(now).toBeGreaterThanOrEqual(DEFAULTS.retryForMs);
      expect(attempts).toBeGreaterThanOrEqual(30);
      expect(attempts).toBeLessThanOrEqual(40);
    }
  });
});
