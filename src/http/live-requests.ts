/**
 * Requests that stay open (chat streams and long completions, long-polls, status streams) end when
 * their client goes away, when their API key is revoked or expires (within a second: decided by the
 * same hashed lookup as every request, so a revocation by the CLI in another process counts), and
 * when the server shuts down: those that only watch a task (long-polls, status streams: `endsAt:
 * 'drain'`) at once, since any other process answers them as well (G343); the others (chat) when the
 * grace period has passed. Each tracked request gets one AbortSignal for all three; its reason says
 * which: a {@link ClientGone}, or the AppError the caller should see (`invalid_api_key`,
 * `key_expired`, `service_unavailable`).
 */
import type { FastifyReply } from 'fastify';
import { keyRefusal } from '../auth/key-rules.js';
import { AppError, ClientGone } from '../errors.js';
import type { KeyStore } from '../store/types.js';

/** When a shutdown ends an open request: at its start, or at the end of its grace period. */
export type EndsAt = 'drain' | 'grace';

interface Tracked {
  keyHash: string;
  controller: AbortController;
  endsAt: EndsAt;
}

const shuttingDown = (): AppError => new AppError('service_unavailable', 'The gateway is shutting down; retry shortly');

export class LiveRequests {
  private readonly tracked = new Set<Tracked>();
  private timer: NodeJS.Timeout | undefined;
  /** Set when a shutdown begins: ends the requests that end with the drain. */
  private draining: AppError | undefined;
  /** Set when the grace period is over: ends every request. */
  private closing: AppError | undefined;
  /** Called when the last open request is released during a shutdown. */
  private drained: (() => void) | undefined;
  /** Whether a check of the keys is under way (checks never overlap). */
  private checking = false;

  /**
   * `checkMs`: how often the keys of open requests are checked for revocation; `onCheckError`: told
   * when the store could not answer (the requests stay open; the next check tries again).
   */
  constructor(
    private readonly keys: KeyStore,
    private readonly checkMs = 1000,
    private readonly onCheckError: (err: unknown) => void = () => undefined,
    /** The clock keys' expiry is read against (G305). */
    private readonly now: () => number = Date.now,
  ) {}

  /** How many requests are open now. */
  get size(): number {
    return this.tracked.size;
  }

  /** Watches one open request; `release()` once its work is over. */
  track(reply: FastifyReply, keyHash: string, endsAt: EndsAt = 'grace'): { signal: AbortSignal; release: () => void } {
    const entry: Tracked = { keyHash, controller: new AbortController(), endsAt };
    const raw = reply.raw;
    const onClose = (): void => {
      if (!raw.writableFinished) entry.controller.abort(new ClientGone());
    };
    raw.on('close', onClose);
    // the client may have gone before the request was tracked ('close' was emitted already)
    if (raw.closed && !raw.writableFinished) entry.controller.abort(new ClientGone());
    const ended = this.closing ?? (endsAt === 'drain' ? this.draining : undefined);
    if (ended) entry.controller.abort(ended);
    this.tracked.add(entry);
    this.timer ??= setInterval(() => {
      this.checkKeys().catch((err: unknown) => this.onCheckError(err));
    }, this.checkMs);
    this.timer.unref();
    return {
      signal: entry.controller.signal,
      release: () => {
        raw.off('close', onClose);
        this.tracked.delete(entry);
        if (this.tracked.size === 0) {
          if (this.timer) clearInterval(this.timer);
          this.timer = undefined;
          this.drained?.();
        }
      },
    };
  }

  /**
   * Shutdown: requests that end with the drain are stopped at once (a long-poll answers the task as
   * it is, a status stream ends with an error event), and so are such requests tracked later; after
   * `graceMs` every request still open is stopped with a 503 (a chat stream ends with an error
   * event), and requests tracked later are stopped at once. Resolves once none is open any more (at
   * once when none is).
   */
  shutdown(graceMs: number): Promise<void> {
    this.draining ??= shuttingDown();
    for (const t of this.tracked) if (t.endsAt === 'drain') t.controller.abort(this.draining);
    return new Promise((resolve) => {
      if (this.tracked.size === 0) {
        resolve();
        return;
      }
      this.drained = resolve;
      const stop = (): void => {
        this.closing = shuttingDown();
        for (const t of this.tracked) t.controller.abort(this.closing);
      };
      if (graceMs <= 0) stop();
      else setTimeout(stop, graceMs).unref();
    });
  }

  /** Ends the requests of keys that are no longer active: revoked, expired (G305), or a rotated-out secret past its grace (G307). */
  private async checkKeys(): Promise<void> {
    if (this.checking) return; // a slow store: the last check is still under way
    this.checking = true;
    try {
      const refusals = new Map<string, AppError | null>();
      for (const t of [...this.tracked]) {
        let refusal = refusals.get(t.keyHash);
        if (refusal === undefined) {
          const key = await this.keys.findActiveByHash(t.keyHash);
          refusal = key ? (keyRefusal(key, this.now()) ?? null) : new AppError('invalid_api_key', 'The API key was revoked while this request was open');
          refusals.set(t.keyHash, refusal);
        }
        if (refusal) t.controller.abort(refusal);
      }
    } finally {
      this.checking = false;
    }
  }
}
