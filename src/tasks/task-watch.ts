/**
 * Long-poll waiters (`?wait=N` on the query paths): a waiter is released as soon as its task's
 * status differs from the one it saw, at its deadline, or when its client goes away. Changes made
 * through this process's store are seen at once (`watchChanges`); changes by other processes are
 * noticed by one shared check every `pollMs` (`changedElsewhere`, a single cheap SQLite read, made
 * once for the whole process by ElsewhereChanges) where the store has it (a store without it reports other processes' writes through `watchChanges`), so
 * a waiter costs a map entry and a timer, not reads. Waiters are bounded in all (this process's
 * memory) and per key: in this process, or across every process where the store counts long-poll
 * slots (G197). Past a bound a query simply answers at once.
 */
import type { TaskStatus, TaskStore, WaitSlots } from '../store/types.js';
import { ElsewhereChanges } from './elsewhere.js';

interface Waiter {
  id: string;
  status: TaskStatus;
  keyId: string;
  release: () => void;
}

export interface TaskWatchOptions {
  /** How often other processes' changes are looked for while anyone waits, ms. */
  pollMs?: number;
  maxWaiters?: number;
  maxWaitersPerKey?: number;
  /** Counts each key's waiters across processes (the per-key bound then holds cluster-wide). */
  slots?: WaitSlots;
  /** The process's one look at other processes' writes, shared with the status streams (default: one of its own, every `pollMs`). */
  elsewhere?: ElsewhereChanges;
}

export class TaskWatch {
  private readonly byTask = new Map<string, Set<Waiter>>();
  private readonly perKey = new Map<string, number>();
  private count = 0;
  /** Slots being taken from the store now: counted against the process's bound meanwhile. */
  private taking = 0;
  private stopElsewhere: (() => void) | undefined;
  private readonly elsewhere: ElsewhereChanges;
  private readonly unsubscribe: () => void;
  private readonly maxWaiters: number;
  private readonly maxWaitersPerKey: number;
  private readonly slots: WaitSlots | undefined;

  constructor(
    private readonly store: TaskStore,
    options: TaskWatchOptions = {},
  ) {
    this.elsewhere = options.elsewhere ?? new ElsewhereChanges(store, options.pollMs ?? 250);
    this.maxWaiters = options.maxWaiters ?? 10_000;
    this.maxWaitersPerKey = options.maxWaitersPerKey ?? 100;
    this.slots = options.slots;
    this.unsubscribe = store.watchChanges((id) => this.check(id));
  }

  /** Waiting now. */
  get size(): number {
    return this.count;
  }

  /**
   * Resolves when task `id` is no longer in `status`, after `timeoutMs`, or when `signal` aborts;
   * at once when the bounds are reached (the caller then answers what it has).
   */
  waitForChange(id: string, status: TaskStatus, keyId: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (timeoutMs <= 0 || signal.aborted || this.count + this.taking >= this.maxWaiters) return Promise.resolve();
    if (!this.slots) {
      if ((this.perKey.get(keyId) ?? 0) >= this.maxWaitersPerKey) return Promise.resolve();
      return this.wait(id, status, keyId, Date.now() + timeoutMs, signal);
    }
    return this.waitInSlot(this.slots, id, status, keyId, Date.now() + timeoutMs, signal);
  }

  /**
   * Waits holding one of the key's slots counted across processes. The task may have changed while
   * the slot was taken (no waiter was registered yet), so it is read once after registering.
   */
  private async waitInSlot(slots: WaitSlots, id: string, status: TaskStatus, keyId: string, until: number, signal: AbortSignal): Promise<void> {
    this.taking++;
    let release: (() => void) | undefined;
    try {
      release = await slots.take(keyId, this.maxWaitersPerKey, until);
    } catch {
      return; // the store cannot count slots now: answer at once rather than wait unbounded
    } finally {
      this.taking--;
    }
    if (!release) return;
    try {
      if (signal.aborted || Date.now() >= until) return;
      const waited = this.wait(id, status, keyId, until, signal);
      this.check(id);
      await waited;
    } finally {
      release();
    }
  }

  private wait(id: string, status: TaskStatus, keyId: string, until: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => waiter.release(), until - Date.now());
      const onAbort = (): void => waiter.release();
      const waiter: Waiter = {
        id,
        status,
        keyId,
        release: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.remove(waiter);
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      let set = this.byTask.get(id);
      if (!set) {
        set = new Set();
        this.byTask.set(id, set);
      }
      set.add(waiter);
      this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
      this.count++;
      this.stopElsewhere ??= this.elsewhere.observe(() => this.pollElsewhere());
    });
  }

  close(): void {
    this.unsubscribe();
    for (const set of [...this.byTask.values()]) for (const w of [...set]) w.release();
  }

  /**
   * Releases the waiters of `id` whose status is no longer the one they saw; all of them when the
   * task cannot be read (each query then reads it again and answers what it finds).
   */
  private check(id: string): void {
    if (!this.byTask.has(id)) return;
    void this.store
      .get(id)
      .then(
        (task) => task?.status,
        () => null,
      )
      .then((status) => {
        const set = this.byTask.get(id);
        if (set) for (const w of [...set]) if (status !== w.status) w.release();
      });
  }

  private pollElsewhere(): void {
    for (const id of [...this.byTask.keys()]) this.check(id);
  }

  private remove(w: Waiter): boolean {
    const set = this.byTask.get(w.id);
    if (!set?.delete(w)) return false;
    if (set.size === 0) this.byTask.delete(w.id);
    const n = (this.perKey.get(w.keyId) ?? 1) - 1;
    if (n === 0) this.perKey.delete(w.keyId);
    else this.perKey.set(w.keyId, n);
    this.count--;
    if (this.count === 0 && this.stopElsewhere) {
      this.stopElsewhere();
      this.stopElsewhere = undefined;
    }
    return true;
  }
}
