import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../contract/families.js';
import { estimatedProgress, TYPICAL_SECONDS } from './progress-estimate.js';

describe('estimated progress', () => {
  it('starts at 0, is 90 at the typical duration, and stays below 100 however long it runs', () => {
    expect(estimatedProgress('clip', 0)).toBe(0);
    expect(estimatedProgress('clip', 60_000)).toBe(45);
    expect(estimatedProgress('clip', 120_000)).toBe(90);
    expect(estimatedProgress('clip', 240_000)).toBe(95);
    expect(estimatedProgress('clip', 365 * 24 * 3600_000)).toBe(99);
  });

  it('never decreases with time, for every family', () => {
    for (const family of FAMILIES) {
      let last = -1;
      for (let s = 0; s <= TYPICAL_SECONDS[family] * 10; s += 1) {
        const p = estimatedProgress(family, s * 1000);
        expect(p).toBeGreaterThanOrEqual(last);
        last = p;
      }
    }
  });
});
