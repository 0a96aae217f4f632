/**
 * Admission of caller media to fetching and checking (media review, asset uploads and fetches),
 * fair between API keys (G100, G101). A medium holds one slot and a byte reservation
 * while it is fetched, probed and moved into place:
 *
 * - per process at most `slots` media and `bytes` reserved bytes, per key at most `keySlots` and
 *   `keyBytes`; a medium reserves its size cap and gives back what its Content-Length does not need;
 * - each key waits in its own FIFO queue. A key whose next medium does not fit its own limits is
 *   passed over, so a key waits only behind its own work while the process has room. Of the others,
 *   the key with the fewest media in flight goes first (ties: in turn, round robin); if its next
 *   medium does not fit the process's bytes, nobody overtakes it (a large medium is not starved by
 *   small ones of other keys);
 * - at most `keyQueue` media of one key wait at once; one more is refused at once
 *   ({@link AdmissionQueueFull}).
 */

export interface AdmissionLimits {
  /** Media fetched and checked at once, process-wide. */
  slots: number;
  /** ... by one key. */
  keySlots: number;
  /** Bytes reserved at once, process-wide. */
  bytes: number;
  /** ... by one key. */
  keyBytes: number;
  /** Media of one key waiting at once. */
  keyQueue: number;
}

/** One admitted medium's hold on a slot and bytes. */
export interface Reservation {
  /** Bytes currently reserved. */
  readonly bytes: number;
  /** Lowers the reservation to `bytes` (never raises it); the rest goes to waiting media at once. */
  shrink(bytes: number): void;
  /** Gives the slot and the bytes back; later calls do nothing. */
  release(): void;
}

/** The key already has `limit` media waiting. */
export class AdmissionQueueFull extends Error {
  constructor(readonly limit: number) {
    super(`${limit} media of this key are already waiting`);
    this.name = 'AdmissionQueueFull';
  }
}

interface Waiter {
  bytes: number;
  grant: () => void;
}

interface KeyState {
  active: number;
  bytes: number;
  queue: Waiter[];
}

export interface AdmissionSnapshot {
  active: number;
  bytes: number;
  queued: number;
  keys: Record<string, { active: number; bytes: number; queued: number }>;
}

export class MediaAdmission {
  private active = 0;
  private reserved = 0;
  private readonly keys = new Map<string, KeyState>();
  /** Keys with waiting media, in the order they are served. */
  private ring: string[] = [];

  constructor(readonly limits: AdmissionLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
    if (limits.keySlots > limits.slots) throw new RangeError(`keySlots (${limits.keySlots}) must not exceed slots (${limits.slots})`);
    if (limits.keyBytes > limits.bytes) throw new RangeError(`keyBytes (${limits.keyBytes}) must not exceed bytes (${limits.bytes})`);
  }

  /** The most media one key can have admitted or waiting at once: one request with more could never be admitted whole. */
  get keyMost(): number {
    return this.limits.keySlots + this.limits.keyQueue;
  }

  /**
   * Runs `fn` once `key` may have one more medium of `bytes` in flight, and gives the slot and the
   * bytes back when it settles. Rejects with {@link AdmissionQueueFull} when the key's queue is
   * full, with the signal's reason when it aborts while waiting, and with a RangeError when `bytes`
   * exceeds a budget (it could never be admitted).
   */
  async run<T>(key: string, bytes: number, fn: (reservation: Reservation) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const reservation = await this.acquire(key, bytes, signal);
    try {
      return await fn(reservation);
    } finally {
      reservation.release();
    }
  }

  /** Waits for a slot and `bytes` for `key` (see {@link run}); the caller must release the reservation. */
  acquire(key: string, bytes: number, signal?: AbortSignal): Promise<Reservation> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!Number.isSafeInteger(bytes) || bytes < 0) return Promise.reject(new RangeError(`bytes must be a whole number >= 0, got ${bytes}`));
    if (bytes > this.limits.keyBytes) {
      return Promise.reject(new RangeError(`a reservation of ${bytes} bytes exceeds the per-key budget of ${this.limits.keyBytes} bytes`));
    }
    const state = this.stateOf(key);
    if (state.queue.length >= this.limits.keyQueue) {
      this.dropIfIdle(key, state);
      return Promise.reject(new AdmissionQueueFull(this.limits.keyQueue));
    }
    return new Promise<Reservation>((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.reservation(key, state, bytes));
        },
      };
      const onAbort = (): void => {
        const i = state.queue.indexOf(waiter);
        if (i < 0) return;
        state.queue.splice(i, 1);
        if (state.queue.length === 0) this.ring = this.ring.filter((k) => k !== key);
        this.dropIfIdle(key, state);
        reject(signal?.reason);
        this.pump(); // the medium that blocked the line may be gone
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      state.queue.push(waiter);
      if (state.queue.length === 1) this.ring.push(key);
      this.pump();
    });
  }

  /** Slots and bytes in use and waiting, process-wide and per key. */
  snapshot(): AdmissionSnapshot {
    const keys: AdmissionSnapshot['keys'] = {};
    let queued = 0;
    for (const [key, s] of this.keys) {
      keys[key] = { active: s.active, bytes: s.bytes, queued: s.queue.length };
      queued += s.queue.length;
    }
    return { active: this.active, bytes: this.reserved, queued, keys };
  }

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { active: 0, bytes: 0, queue: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  private dropIfIdle(key: string, state: KeyState): void {
    if (state.active === 0 && state.queue.length === 0 && this.keys.get(key) === state) this.keys.delete(key);
  }

  private reservation(key: string, state: KeyState, initial: number): Reservation {
    let held = initial;
    let released = false;
    const give = (n: number): void => {
      held -= n;
      state.bytes -= n;
      this.reserved -= n;
    };
    return {
      get bytes() {
        return held;
      },
      shrink: (to: number) => {
        if (released || !(to >= 0) || to >= held) return;
        give(held - Math.floor(to));
        this.pump();
      },
      release: () => {
        if (released) return;
        released = true;
        give(held);
        state.active--;
        this.active--;
        this.dropIfIdle(key, state);
        this.pump();
      },
    };
  }

  /** Grants waiting media while they fit (see the module comment for the order). */
  private pump(): void {
    const { slots, keySlots, bytes, keyBytes } = this.limits;
    while (this.active < slots) {
      // the waiting key with the fewest media in flight whose next medium fits its own limits; ties in turn
      let pick = -1;
      let fewest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < this.ring.length; i++) {
        const state = this.keys.get(this.ring[i]!)!;
        const next = state.queue[0]!;
        if (state.active >= keySlots || state.bytes + next.bytes > keyBytes) continue; // waits behind its own work
        if (state.active < fewest) {
          pick = i;
          fewest = state.active;
        }
      }
      if (pick < 0) return;
      const key = this.ring[pick]!;
      const state = this.keys.get(key)!;
      const next = state.queue[0]!;
      if (this.reserved + next.bytes > bytes) return; // next in line for the process's bytes: nobody overtakes it
      state.queue.shift();
      this.ring.splice(pick, 1);
      if (state.queue.length > 0) this.ring.push(key); // its next medium waits for its next turn
      state.active++;
      state.bytes += next.bytes;
      this.active++;
      this.reserved += next.bytes;
      next.grant();
    }
  }
}
