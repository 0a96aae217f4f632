/**
 * Rate-limit counts in Redis (`MEDIAGATE_REDIS_URL`, G196): one atomic script per request
 * (rate-limiter-flexible's RateLimiterRedis on ioredis), shared by every process that uses the same
 * Redis. Loaded only when the setting is given. Commands fail fast while Redis is unreachable
 * (no offline queue, 1 s command timeout) and the limits fall back to this process's counts.
 */
import type { Logger } from 'pino';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { redactedUrl } from '../redacted-url.js';
import { sharedBackend, type RateLimitBackend } from './backend.js';

const KEY_PREFIX = 'mediagate:rl:';

/** Connects (rejecting with a clear message when Redis cannot be reached) and answers the backend. */
export async function openRedisBackend(url: string, logger?: Logger): Promise<RateLimitBackend> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 5000 });
  let lastError = '';
  client.on('error', (err: Error) => {
    if (err.message === lastError) return; // once per kind of failure while reconnecting, not per attempt
    lastError = err.message;
    logger?.warn({ redis: redactedUrl(url, 'MEDIAGATE_REDIS_URL'), err: { message: err.message } }, 'Redis: connection failed');
  });
  client.on('ready', () => {
    lastError = '';
  });
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    throw new Error(`could not reach Redis at ${redactedUrl(url, 'MEDIAGATE_REDIS_URL')} (MEDIAGATE_REDIS_URL): ${(err as Error).message}`, { cause: err });
  }
  return sharedBackend(
    'redis',
    (options) =>
      new RateLimiterRedis({
        storeClient: client,
        rejectIfRedisNotReady: true,
        ...options,
        keyPrefix: `${KEY_PREFIX}${options.keyPrefix}`,
      }),
    async () => {
      await client.quit().catch(() => client.disconnect());
    },
    logger,
  );
}
