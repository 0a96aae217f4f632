import { describe, expect, it } from 'vitest';
import { createLimiter } from './limiter.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('createLimiter', () => {
  it('runs at most `limit` at once, first come first served', async () => {
    const limiter = createLimiter(2);
    const order: number[] = [];
    const gates = [0, 1, 2, 3].map(() => {
      let open!: () => void;
      const p = new Promise<void>((r) => {
        open = r;
      });
      return { p, open };
    });
    const runs = gates.map((g, i) =>
      limiter.run(async () => {
        order.push(i);
        await g.p;
      }),
    );
    await tick();
    expect(order).toEqual([0, 1]);
    expect([limiter.active, limiter.queued]).toEqual([2, 2]);
    gates[1]!.open();
    await tick();
    await tick();
    expect(order).toEqual([0, 1, 2]);
    limiter.setLimit(3);
    await tick();
    expect(order).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  it('a waiter whose signal aborts leaves the queue without running', async () => {
    const limiter = createLimiter(1);
    let release!: () => void;
    const holder = limiter.run(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    const ac = new AbortController();
    let ran = false;
    const waiting = limiter.run(async () => {
      ran = true;
    }, ac.signal);
    ac.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(limiter.queued).toBe(0);
    release();
    await holder;
    expect(ran).toBe(false);
    expect(() => createLimiter(0)).toThrow(RangeError);
  });
});
