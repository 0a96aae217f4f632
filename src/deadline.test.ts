import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { abortRace, deadline } from './deadline.js';

describe('deadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts with the timeout reason once the time is up', () => {
    const d = deadline(new AbortController().signal, 1000, () => new Error('too slow'));
    vi.advanceTimersByTime(999);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.signal.reason).toEqual(new Error('too slow'));
  });

  it("aborts with the parent's reason, also when the parent had already aborted", () => {
    const parent = new AbortController();
    const d = deadline(parent.signal, 1000);
    parent.abort('cancelled');
    expect(d.signal.reason).toBe('cancelled');
    expect(deadline(parent.signal, 1000).signal.reason).toBe('cancelled');
  });

  it('lets go of its timer and of the parent when released', () => {
    const parent = new AbortController();
    const d = deadline(parent.signal, 1000);
    expect(vi.getTimerCount()).toBe(1);
    d.release();
    expect(vi.getTimerCount()).toBe(0);
    parent.abort('late');
    vi.advanceTimersByTime(2000);
    expect(d.signal.aborted).toBe(false);
  });
});

describe('abortRace', () => {
  it("rejects with the signal's reason when it aborts", async () => {
    const c = new AbortController();
    const race = abortRace(c.signal);
    c.abort('stop');
    await expect(race.promise).rejects.toBe('stop');
  });

  it('stops listening when released', async () => {
    const c = new AbortController();
    const race = abortRace(c.signal);
    race.release();
    c.abort('stop');
    const settled = await Promise.race([
      race.promise.then(
        () => 'settled',
        () => 'settled',
      ),
      Promise.resolve('pending'),
    ]);
    expect(settled).toBe('pending');
  });
});
