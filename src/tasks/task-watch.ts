/**
 * Long-poll waiters (`?wait=N` on the query paths): a waiter is released as soon as its task's
 * status differs from the one it saw, at its deadline, or when its client goes away. Changes made
 * through this process's store are seen at once (`watchChanges`); changes by other processes are
 * noticed by one shared check every `pollMs` (`changedElsewhere`, a single cheap SQLite read) where
 * the store has it (a store without it reports other processes' writes through `watchChanges`), so
 * a waiter costs a map entry and a timer, not reads. Waiters are bounded in all and per key;
 * past the bound a query simply answers at once.
 */
import type { TaskStatus, TaskStore } from '../store/types.js';

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
}

export class TaskWatch {
  private readonly byTask = new Map<string, Set<Waiter>>();
  private readonly perKey = new Map<string, number>();
  private count = 0;
  private ticker: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private readonly pollMs: number;
  private readonly maxWaiters: number;
  private readonly maxWaitersPerKey: number;

  constructor(private readonly store: TaskStore, options: TaskWatchOptions = {}) {
    this.pollMs = options.pollMs ?? 250;
    this.maxWaiters = options.maxWaiters ?? 10_000;
    this.maxWaitersPerKey = options.maxWaitersPerKey ?? 100;
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
    const keyCount = this.perKey.get(keyId) ?? 0;
    if (timeoutMs <= 0 || signal.aborted || this.count >= this.maxWaiters || keyCount >= this.maxWaitersPerKey) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => waiter.release(), timeoutMs);
      const onAbort = (): void => waiter.release();
      const waiter: Waiter = {
        id, status, keyId,
        release: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.remove(waiter);
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      let set = this.byTask.get(id);
      if (!set) { set = new Set(); this.byTask.set(id, set); }
      set.add(waiter);
      this.perKey.set(keyId, keyCount + 1);
      this.count++;
      if (this.store.changedElsewhere) {
        this.ticker ??= setInterval(() => this.pollElsewhere(), this.pollMs);
        this.ticker.unref();
      }
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
    void this.store.get(id).then((task) => task?.status, () => null).then((status) => {
      const set = this.byTask.get(id);
      if (set) for (const w of [...set]) if (status !== w.status) w.release();
    });
  }

  private pollElsewhere(): void {
    if (!this.store.changedElsewhere?.()) return;
    for (const id of [...this.byTask.keys()]) this.check(id);
  }

  private remove(w: Waiter): boolean {
    const set = this.byTask.get(w.id);
    if (!set?.delete(w)) return false;
    if (set.size === 0) this.byTask.delete(w.id);
    const n = (this.perKey.get(w.keyId) ?? 1) - 1;
    if (n === 0) this.perKey.delete(w.keyId); else this.perKey.set(w.keyId, n);
    this.count--;
    if (this.count === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    return true;
  }
}
