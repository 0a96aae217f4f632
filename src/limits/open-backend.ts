import type { Logger } from 'pino';
import { memoryBackend, type RateLimitBackend } from './backend.js';

/**
 * The backend a gateway counts with: Redis when `MEDIAGATE_REDIS_URL` is set, else the store's own
 * shared counts (PostgreSQL), else this process's memory.
 */
export async function openRateLimitBackend(
  redisUrl: string | undefined,
  store: { rateLimits?(logger?: Logger): RateLimitBackend },
  logger?: Logger,
): Promise<RateLimitBackend> {
  if (redisUrl !== undefined) {
    const { openRedisBackend } = await import('./redis.js');
    return openRedisBackend(redisUrl, logger);
  }
  return store.rateLimits?.(logger) ?? memoryBackend;
}
