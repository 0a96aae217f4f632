import { describe, expect, it } from 'vitest';
import { AdmissionQueueFull, type AdmissionLimits, MediaAdmission, type Reservation } from './media-admission.js';

const tick = () => new Promise((r) => setImmediate(r));
const LIMITS: AdmissionLimits = { slots: 4, keySlots: 2, bytes: 1000, keyBytes: 600, keyQueue: 8 };

/** Asks for a reservation and records the order in which reservations are granted. */
function recorder(admission: MediaAdmission) {
  const granted: string[] = [];
  const held = new Map<string, Reservation>();
  const ask = (key: string, name: string, bytes = 1, signal?: AbortSignal) =>
    admission.acquire(key, bytes, signal).then((r) => {
      granted.push(name);
      held.set(name, r);
      return r;
    });
  const release = async (name: string) => {
    held.get(name)!.release();
    await tick();
  };
  return { granted, ask, release };
}

describe('MediaAdmission', () => {
  it('a key waits behind its own work only: past its slots, another key still gets in at once', async () => {
    const admission = new MediaAdmission(LIMITS);
    const { granted, ask, release } = recorder(admission);
    for (const name of ['a1', 'a2', 'a3', 'a4']) void ask('A', name);
    await tick();
    expect(granted).toEqual(['a1', 'a2']); // A's third and fourth wait for A's own slots
    void ask('B', 'b1');
    await tick();
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    expect(admission.snapshot()).toMatchObject({ active: 3, queued: 2, keys: { A: { active: 2, queued: 2 }, B: { active: 1, queued: 0 } } });
    await release('a1');
    expect(granted).toEqual(['a1', 'a2', 'b1', 'a3']); // FIFO within a key
  });

  it('when the process is full, a freed slot goes to the waiting key with the fewest media in flight, then in turn', async () => {
    const admission = new MediaAdmission({ ...LIMITS, slots: 2, keySlots: 2 });
    const { granted, ask, release } = recorder(admission);
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) void ask('A', name);
    await tick();
    void ask('B', 'b1');
    void ask('B', 'b2');
    void ask('C', 'c1');
    await tick();
    expect(granted).toEqual(['a1', 'a2']);
    await release('a1'); // A holds 1, B and C none: B (waiting longer than C) goes first
    expect(granted.slice(2)).toEqual(['b1']);
    await release('a2'); // A 0, B 1, C 0: A and C tie; A has waited longest
    expect(granted.slice(3)).toEqual(['a3']);
    await release('b1'); // A 1, B 0, C 0: C's turn comes before B's second
    expect(granted.slice(4)).toEqual(['c1']);
    await release('a3');
    await release('c1');
    expect(granted.slice(5)).toEqual(['b2', 'a4']);
  });

  it('bytes: a key waits for its own byte budget; a shrunk reservation lets the next one in at once', async () => {
    const admission = new MediaAdmission(LIMITS);
    const { granted, ask } = recorder(admission);
    const first = await ask('A', 'a1', 400);
    void ask('A', 'a2', 400); // 800 > A's 600
    void ask('B', 'b1', 400); // B has its own budget
    await tick();
    expect(granted).toEqual(['a1', 'b1']);
    first.shrink(150); // its Content-Length: 150 bytes
    await tick();
    expect(granted).toEqual(['a1', 'b1', 'a2']);
    expect(first.bytes).toBe(150);
    expect(admission.snapshot()).toMatchObject({ bytes: 950, keys: { A: { bytes: 550 }, B: { bytes: 400 } } });
    first.shrink(400); // never raises
    expect(first.bytes).toBe(150);
  });

  it('the process byte budget: the next in line is not overtaken by smaller media of other keys', async () => {
    const admission = new MediaAdmission({ ...LIMITS, bytes: 1000, keyBytes: 600, slots: 10, keySlots: 5 });
    const { granted, ask, release } = recorder(admission);
    await ask('A', 'a1', 600);
    await ask('B', 'b1', 300);
    void ask('C', 'c1', 500); // 1400 > 1000: waits
    void ask('D', 'd1', 50); // would fit, but C is next in line
    await tick();
    expect(granted).toEqual(['a1', 'b1']);
    await release('a1');
    expect(granted).toEqual(['a1', 'b1', 'c1', 'd1']);
  });

  it('at most keyQueue media of a key wait; one more is refused at once, other keys are unaffected', async () => {
    const admission = new MediaAdmission({ ...LIMITS, keySlots: 1, keyQueue: 2 });
    const { granted, ask } = recorder(admission);
    void ask('A', 'a1');
    void ask('A', 'a2');
    void ask('A', 'a3');
    await expect(ask('A', 'a4')).rejects.toBeInstanceOf(AdmissionQueueFull);
    await expect(ask('A', 'a4')).rejects.toThrow('2 media of this key are already waiting');
    await ask('B', 'b1');
    expect(granted).toEqual(['a1', 'b1']);
  });

  it('a waiter whose signal aborts leaves its queue with the reason; the line moves on', async () => {
    const admission = new MediaAdmission({ ...LIMITS, bytes: 1000, keyBytes: 600, slots: 10, keySlots: 5 });
    const { granted, ask } = recorder(admission);
    await ask('A', 'a1', 600);
    const ac = new AbortController();
    const blocked = ask('B', 'b1', 500, ac.signal); // next in line for the process's bytes
    void ask('C', 'c1', 100);
    await tick();
    expect(granted).toEqual(['a1']);
    const reason = new Error('gone');
    ac.abort(reason);
    await expect(blocked).rejects.toBe(reason);
    await tick();
    expect(granted).toEqual(['a1', 'c1']);
    expect(admission.snapshot().keys.B).toBeUndefined();
    await expect(admission.acquire('A', 1, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('run() gives everything back, also when fn throws; release is idempotent', async () => {
    const admission = new MediaAdmission(LIMITS);
    await expect(
      admission.run('A', 300, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const r = await admission.acquire('A', 300);
    r.release();
    r.release();
    expect(admission.snapshot()).toEqual({ active: 0, bytes: 0, queued: 0, keys: {} });
  });

  it('refuses what could never be admitted and limits that make no sense', async () => {
    const admission = new MediaAdmission(LIMITS);
    await expect(admission.acquire('A', 601)).rejects.toThrow(RangeError);
    await expect(admission.acquire('A', -1)).rejects.toThrow(RangeError);
    expect(() => new MediaAdmission({ ...LIMITS, keySlots: 5 })).toThrow(RangeError);
    expect(() => new MediaAdmission({ ...LIMITS, keyBytes: 2000 })).toThrow(RangeError);
    expect(() => new MediaAdmission({ ...LIMITS, keyQueue: 0 })).toThrow(RangeError);
  });
});
