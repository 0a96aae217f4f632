/**
 * A value fetched from an upstream and kept (a webhook signing secret, a set of public keys:
 * G158): fetched when first needed, again once older than `maxAgeMs`, and on demand
 * (`refresh`, when a delivery matches none of the keys at hand: they may have been rotated) at most
 * once every `minRefreshMs`, so deliveries anyone can send never make more fetches than that. One
 * fetch at a time: concurrent callers share it. A failed fetch is not repeated for `minRefreshMs`
 * either; meanwhile callers get its error, or the value at hand when there is one (also when a
 * fetch after `maxAgeMs` fails).
 */
export interface RefreshingValueOptions {
  maxAgeMs: number;
  minRefreshMs: number;
  /** The clock, ms (tests step it). */
  now?: () => number;
}

export class RefreshingValue<T> {
  private value: T | undefined;
  private fetchedAt = 0;
  private triedAt: number | undefined;
  private lastError: unknown;
  private inFlight: Promise<T> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly opts: RefreshingValueOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The value: the one at hand while younger than `maxAgeMs`, else fetched (throws when there is none to give). */
  async get(): Promise<T> {
    if (this.value !== undefined && this.now() - this.fetchedAt < this.opts.maxAgeMs) return this.value;
    if (this.inFlight) return this.inFlight;
    if (!this.mayFetch()) {
      if (this.value !== undefined) return this.value;
      throw this.lastError;
    }
    const kept = this.value;
    // an old value serves while a fresh one cannot be had
    return kept === undefined ? this.fetch() : this.fetch().catch(() => kept);
  }

  /**
   * A fresh value, when the last fetch (or try) is at least `minRefreshMs` old; undefined when one
   * was made more recently than that (no fetch is made). Throws when the fetch fails.
   */
  async refresh(): Promise<T | undefined> {
    if (this.inFlight) return this.inFlight;
    if (!this.mayFetch()) return undefined;
    return this.fetch();
  }

  private mayFetch(): boolean {
    return this.triedAt === undefined || this.now() - this.triedAt >= this.opts.minRefreshMs;
  }

  private fetch(): Promise<T> {
    this.triedAt = this.now();
    this.inFlight = this.load()
      .then(
        (v) => {
          this.value = v;
          this.fetchedAt = this.now();
          return v;
        },
        (err: unknown) => {
          this.lastError = err;
          throw err;
        },
      )
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
