import { describe, expect, it } from 'vitest';
import { metricOutcome } from './worker.js';

describe('metricOutcome: how /metrics counts a webhook attempt', () => {
  it.each([
    [{ status: 'delivered' } as const, undefined, 'delivered'],
    [{ status: 'pending', nextAttemptAt: 1 } as const, 'status' as const, 'failed'],
    [{ status: 'pending', nextAttemptAt: 1 } as const, 'network' as const, 'failed'],
    [{ status: 'pending', nextAttemptAt: 1 } as const, 'timeout' as const, 'timeout'],
    [{ status: 'pending', nextAttemptAt: 1 } as const, 'refused' as const, 'refused'],
    [{ status: 'failed' } as const, 'timeout' as const, 'gave_up'],
  ])('%o after a %s failure is %s', (outcome, failure, expected) => {
    expect(metricOutcome(outcome, failure)).toBe(expected);
  });
});
