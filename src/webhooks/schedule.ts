/**
 * When a failed delivery is tried again (G212): after the first failed attempt
 * `firstRetryMs` (5 s), doubling after each, capped at `maxRetryMs` (1 h), each wait drawn within
 * +-20 % (jitter: receivers that came back are not hit by every gateway at once); the attempt that
 * fails once `retryForMs` (24 h) have passed since the delivery was queued is the last. With the
 * defaults: 5 s, 10 s, ... 2560 s (about 1.4 h for the first 11 attempts), then hourly: about 34
 * attempts over 24 h.
 */
import type { WebhookSettings } from '../config.js';
import type { DeliveryOutcome } from '../store/webhook-types.js';

const JITTER = 0.2;

/** The wait after failed attempt number `attempt` (1 for the first), before jitter. */
export function retryDelayMs(settings: Pick<WebhookSettings, 'firstRetryMs' | 'maxRetryMs'>, attempt: number): number {
  return Math.min(settings.maxRetryMs, settings.firstRetryMs * 2 ** Math.min(attempt - 1, 40));
}

/** What a failed attempt leaves: the next attempt, or given up. `random` in [0, 1) draws the jitter. */
export function afterFailure(settings: WebhookSettings, attempt: number, queuedAt: number, now: number, random = Math.random()): DeliveryOutcome {
  if (now - queuedAt >= settings.retryForMs) return { status: 'failed' };
  const delay = retryDelayMs(settings, attempt) * (1 - JITTER + 2 * JITTER * random);
  return { status: 'pending', nextAttemptAt: now + Math.round(delay) };
}
