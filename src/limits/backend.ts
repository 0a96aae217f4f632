/**
 * Where the per-key rate-limit counts live (G196): this process's memory (one process, or
 * processes that each count their own), or a store every process shares, Redis
 * (`MEDIAGATE_REDIS_URL`) or the PostgreSQL store's database, so a key's budget holds across all
 * of them. A shared backend keeps a count in memory too, used only while its store cannot be
 * reached (requests are then limited per process instead of failing), and stops asking the store
 * about a key for the rest of a window once the key has spent its budget there. Which backend a
 * gateway opens: open-backend.ts.
 */
import { RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from 'pino';

export interface LimiterOptions {
  /** Names the budget; counts are kept per key under it. */
  keyPrefix: string;
  /** Requests allowed per window. */
  points: number;
  /** The window, seconds. */
  duration: number;
}

export interface RateLimitBackend {
  /** `memory`, `redis` or `postgres`, for the start log. */
  readonly name: string;
  limiter(options: LimiterOptions): RateLimiterAbstract;
  close(): Promise<void>;
}

export const memoryBackend: RateLimitBackend = {
  name: 'memory',
  limiter: (options) => new RateLimiterMemory(options),
  close: async () => undefined,
};

/** The options every shared limiter adds to a store limiter's own. */
export interface SharedLimiterOptions extends LimiterOptions {
  /** Counts in this process while the store cannot be reached. */
  insuranceLimiter: RateLimiterAbstract;
  /** A key that spent this many points is refused from memory until its window ends. */
  inMemoryBlockOnConsumed: number;
}

const WARN_EVERY_MS = 60_000;

/**
 * A backend whose limiters `make` builds on a shared store, with the in-memory fallback and the
 * in-memory block added; a failing store is reported at most once a minute.
 */
export function sharedBackend(
  name: string,
  make: (options: SharedLimiterOptions) => RateLimiterAbstract,
  close: () => Promise<void>,
  logger?: Logger,
): RateLimitBackend {
  let warnedAt = -Infinity;
  const warn = (): void => {
    const now = Date.now();
    if (now - warnedAt < WARN_EVERY_MS) return;
    warnedAt = now;
    logger?.warn({ backend: name }, 'rate limits: the shared store cannot be reached; counting in this process until it can');
  };
  return {
    name,
    limiter: (options) => {
      const insurance = new RateLimiterMemory(options);
      const consume = insurance.consume.bind(insurance);
      insurance.consume = (...args) => {
        warn();
        return consume(...args);
      };
      return make({ ...options, insuranceLimiter: insurance, inMemoryBlockOnConsumed: options.points });
    },
    close,
  };
}
