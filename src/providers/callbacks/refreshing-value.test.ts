import { describe, expect, it } from 'vitest';
import { RefreshingValue } from './refreshing-value.js';

function setup(opts = { maxAgeMs: 1000, minRefreshMs: 100 }) {
  let now = 0;
  let n = 0;
  let fail = false;
  const loads: number[] = [];
  const value = new RefreshingValue(
    async () => {
      loads.push(now);
      if (fail) throw new Error(`down at ${now}`);
      return `v${++n}`;
    },
    { ...opts, now: () => now },
  );
  return {
    value,
    loads,
    step: (ms: number) => {
      now += ms;
    },
    failing: (f: boolean) => {
      fail = f;
    },
  };
}

describe('a value fetched from an upstream and kept', () => {
  it('is fetched once and kept until maxAge; concurrent callers share one fetch', async () => {
    const t = setup();
    expect(await Promise.all([t.value.get(), t.value.get(), t.value.get()])).toEqual(['v1', 'v1', 'v1']);
    t.step(999);
    expect(await t.value.get()).toBe('v1');
    t.step(1);
    expect(await t.value.get()).toBe('v2');
    expect(t.loads).toEqual([0, 1000]);
  });

  it('refresh fetches at most once per minRefresh, however often it is asked', async () => {
    const t = setup();
    await t.value.get();
    expect(await t.value.refresh()).toBeUndefined();
    t.step(99);
    expect(await t.value.refresh()).toBeUndefined();
    t.step(1);
    expect(await Promise.all([t.value.refresh(), t.value.refresh()])).toEqual(['v2', 'v2']);
    for (let i = 0; i < 50; i++) await t.value.refresh();
    expect(t.loads).toEqual([0, 100]);
  });

  it('a failed fetch is not repeated for minRefresh: callers get its error; an old value serves meanwhile', async () => {
    const t = setup();
    t.failing(true);
    await expect(t.value.get()).rejects.toThrow('down at 0');
    t.step(50);
    await expect(t.value.get()).rejects.toThrow('down at 0');
    expect(t.loads).toEqual([0]);
    t.step(50);
    t.failing(false);
    expect(await t.value.get()).toBe('v1');
    t.step(1000);
    t.failing(true);
    expect(await t.value.get()).toBe('v1'); // too old, and the fetch failed: the old one serves
    await expect(t.value.refresh()).resolves.toBeUndefined();
    expect(t.loads).toEqual([0, 100, 1100]);
  });
});
