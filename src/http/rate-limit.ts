/**
 * Rate limits per API key (rate-limiter-flexible), one budget for submits (every POST and DELETE:
 * creates, cancels, chat, asset uploads and deletes) and one for queries (every GET). Each is a sustained rate with
 * bursts of twice that: a main limiter of `rate` per second plus a burst limiter of `rate` more per
 * 2 seconds. Over budget: 429 with `Retry-After` and the route's family error body. Keys are
 * limited by the hash of their bearer key (the poll path never loads the key record); a key's own
 * limits (`mediagate keys limit`) are read when its limiter is made and again every 10 s.
 * The memory store is per process; a shared store (Redis) can be passed later without changing
 * the routes. Decisions: docs/API.md G76-G77.
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import { hookList, routeHasMethod } from './route-hooks.js';

export interface RateLimitSettings {
  /** Submits per second per key (bursts of twice that). */
  submitRate: number;
  /** Queries per second per key (bursts of twice that). */
  queryRate: number;
}

type Budget = 'submit' | 'query';

interface KeyLimiters {
  submit: BurstyRateLimiter;
  query: BurstyRateLimiter;
  /** `submitRate/queryRate` the limiters were made with. */
  rates: string;
  checkedAt: number;
}

const REFRESH_MS = 10_000;
const MAX_KEYS = 10_000;

function bursty(rate: number): BurstyRateLimiter {
  return new BurstyRateLimiter(
    new RateLimiterMemory({ points: rate, duration: 1 }),
    new RateLimiterMemory({ points: rate, duration: 2, keyPrefix: 'burst' }),
  );
}

export function registerRateLimits(scope: FastifyInstance, keys: KeyStore, settings: RateLimitSettings): void {
  const byKey = new Map<string, KeyLimiters>();

  /**
   * The limiters of an active key; undefined for an unknown or revoked one (the route answers 401).
   * Answered at once while the key was checked within REFRESH_MS (the common case: no store round trip).
   */
  const limitersFor = (keyHash: string): KeyLimiters | undefined | Promise<KeyLimiters | undefined> => {
    const entry = byKey.get(keyHash);
    if (entry && Date.now() - entry.checkedAt <= REFRESH_MS) return entry;
    return keys.findActiveByHash(keyHash).then((key) => limitersOf(keyHash, key));
  };

  const limitersOf = (keyHash: string, key: ApiKeyRecord | undefined): KeyLimiters | undefined => {
    const now = Date.now();
    const entry = byKey.get(keyHash);
    if (!key) { // never a budget for a key that does not exist: random keys cannot push real ones out
      if (entry) byKey.delete(keyHash);
      return undefined;
    }
    const submitRate = key.submitRate ?? settings.submitRate;
    const queryRate = key.queryRate ?? settings.queryRate;
    const rates = `${submitRate}/${queryRate}`;
    if (entry && entry.rates === rates) { // same limits: keep the running counts
      entry.checkedAt = now;
      return entry;
    }
    if (!entry && byKey.size >= MAX_KEYS) byKey.delete(byKey.keys().next().value!);
    const made: KeyLimiters = { submit: bursty(submitRate), query: bursty(queryRate), rates, checkedAt: now };
    byKey.set(keyHash, made);
    return made;
  };

  const hook = (budget: Budget): onRequestHookHandler => function rateLimit(request, _reply, done) {
    const keyHash = request.apiKeyHash;
    if (!keyHash) { done(); return; }
    const consume = (limiters: KeyLimiters | undefined): void => {
      if (!limiters) { done(); return; }
      limiters[budget].consume(keyHash).then(() => done(), (res: unknown) => {
        if (!(res instanceof RateLimiterRes)) { done(res as Error); return; }
        const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        done(new AppError('rate_limited', `Too many ${budget === 'submit' ? 'submits' : 'queries'} for this API key; retry after ${retryAfter} s`, { headers: { 'retry-after': String(retryAfter) } }));
      });
    };
    const limiters = limitersFor(keyHash);
    if (limiters instanceof Promise) limiters.then(consume, (err: unknown) => done(err as Error));
    else consume(limiters);
  };
  const submit = hook('submit');
  const query = hook('query');

  // Route-level onRequest hooks run after the scope's auth hook, before the body is read.
  scope.addHook('onRoute', (route) => {
    const writes = routeHasMethod(route, 'POST') || routeHasMethod(route, 'DELETE');
    route.onRequest = [...hookList(route.onRequest), writes ? submit : query];
  });
}
