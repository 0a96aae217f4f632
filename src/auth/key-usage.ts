/**
 * When keys were last used (G308), without a write per request: each process keeps the latest time
 * of each key it authenticated in memory (a map lookup and a set per request) and writes them in one
 * statement every {@link DEFAULT_FLUSH_MS}, before an admin read of keys, and when it stops. A
 * batch that fails to write is kept (merged with newer times) for the next flush.
 */
import type { KeyStore } from '../store/types.js';

export const DEFAULT_FLUSH_MS = 60_000;

export class KeyUsage {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly keys: Pick<KeyStore, 'recordLastUsed'>,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly flushMs = DEFAULT_FLUSH_MS,
  ) {}

  /** Notes a use of the key at `at` (Unix ms); never moves its time back. */
  touch(keyId: string, at: number): void {
    const seen = this.pending.get(keyId);
    if (seen === undefined || at > seen) this.pending.set(keyId, at);
  }

  /** Writes what is pending now (after a write already under way, so nothing is written out of order). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.keys
      .recordLastUsed(batch)
      .catch((err: unknown) => {
        for (const [id, at] of batch) this.touch(id, at);
        this.onError(err);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  start(): void {
    this.timer ??= setInterval(() => {
      void this.flush();
    }, this.flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
