/**
 * One shared look at `TaskStore.changedElsewhere` for every observer in the process (long-poll
 * waiters, status streams). The store's answer is given once (each call resets it), so two
 * observers calling it themselves would take each other's news: here one check every `pollMs`,
 * while anyone observes, tells all of them.
 */
import type { TaskStore } from '../store/types.js';

export class ElsewhereChanges {
  private readonly observers = new Set<() => void>();
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<TaskStore, 'changedElsewhere'>,
    private readonly pollMs = 250,
  ) {}

  /** Whether the store can tell (a store without `changedElsewhere` reports every write through `watchChanges`). */
  get supported(): boolean {
    return typeof this.store.changedElsewhere === 'function';
  }

  /** Calls `onChange` after each check that found other processes' writes, until the returned stop is called. */
  observe(onChange: () => void): () => void {
    if (!this.supported) return () => undefined;
    const observer = (): void => onChange();
    this.observers.add(observer);
    if (!this.ticker) {
      this.ticker = setInterval(() => this.check(), this.pollMs);
      this.ticker.unref();
    }
    return () => {
      this.observers.delete(observer);
      if (this.observers.size === 0 && this.ticker) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
    };
  }

  private check(): void {
    if (!this.store.changedElsewhere?.()) return;
    for (const observer of [...this.observers]) observer();
  }
}
