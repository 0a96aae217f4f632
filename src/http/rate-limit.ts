/**
 * Rate limits per API key (rate-limiter-flexible), one budget for submits (every POST and DELETE:
 * creates, cancels, chat, asset uploads and deletes) and one for queries (every GET). Each is a sustained rate with
 * bursts of twice that: a main limiter of `rate` per second plus a burst limiter of `rate` more per
 * 2 seconds. Over budget: 429 with `Retry-After` and the route's family error body. Keys are
 * limited by the hash of their bearer key (the poll path never loads the key record); a key's own
 * limits (`mediagate keys limit`) are read when its budget is first used and again every 10 s.
 * The counts live where `RateLimitBackend` keeps them: this process's memory, or Redis or
 * PostgreSQL shared by every process (G196). Decisions: G76-G77, G196.
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { BurstyRateLimiter, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import type { RateLimitBackend } from '../limits/backend.js';
import { hookList, routeHasMethod } from './route-hooks.js';

export interface RateLimitSettings {
  /** Submits per second per key (bursts of twice that). */
  submitRate: number;
  /** Queries per second per key (bursts of twice that). */
  queryRate: number;
}

type Budget = 'submit' | 'query';

/** The rates a key was last seen with. */
interface KeyRates {
  submit: number;
  query: number;
  checkedAt: number;
}

const REFRESH_MS = 10_000;
const MAX_KEYS = 10_000;

export function registerRateLimits(scope: FastifyInstance, keys: KeyStore, settings: RateLimitSettings, backend: RateLimitBackend): void {
  const byKey = new Map<string, KeyRates>();
  /** One bursty limiter per budget and rate (keys of equal rates share it; counts are per key). */
  const byRate = new Map<string, BurstyRateLimiter>();

  const limiterFor = (budget: Budget, rate: number): BurstyRateLimiter => {
    const name = `${budget}:${rate}`;
    let limiter = byRate.get(name);
    if (!limiter) {
      limiter = new BurstyRateLimiter(
        backend.limiter({ keyPrefix: budget, points: rate, duration: 1 }),
        backend.limiter({ keyPrefix: `${budget}-burst`, points: rate, duration: 2 }),
      );
      byRate.set(name, limiter);
    }
    return limiter;
  };

  /**
   * The rates of an active key; undefined for an unknown or revoked one (the route answers 401).
   * Answered at once while the key was checked within REFRESH_MS (the common case: no store round trip).
   */
  const ratesFor = (keyHash: string): KeyRates | undefined | Promise<KeyRates | undefined> => {
    const entry = byKey.get(keyHash);
    if (entry && Date.now() - entry.checkedAt <= REFRESH_MS) return entry;
    return keys.findActiveByHash(keyHash).then((key) => ratesOf(keyHash, key));
  };

  const ratesOf = (keyHash: string, key: ApiKeyRecord | undefined): KeyRates | undefined => {
    if (!key) {
      // never a budget for a key that does not exist: random keys cannot push real ones out
      byKey.delete(keyHash);
      return undefined;
    }
    if (!byKey.has(keyHash) && byKey.size >= MAX_KEYS) byKey.delete(byKey.keys().next().value!);
    const rates: KeyRates = { submit: key.submitRate ?? settings.submitRate, query: key.queryRate ?? settings.queryRate, checkedAt: Date.now() };
    byKey.set(keyHash, rates);
    return rates;
  };

  const hook = (budget: Budget): onRequestHookHandler =>
    function rateLimit(request, _reply, done) {
      const keyHash = request.apiKeyHash;
      if (!keyHash) {
        done();
        return;
      }
      const consume = (rates: KeyRates | undefined): void => {
        if (!rates) {
          done();
          return;
        }
        limiterFor(budget, rates[budget])
          .consume(keyHash)
          .then(
            () => done(),
            (res: unknown) => {
              if (!(res instanceof RateLimiterRes)) {
                done(res as Error);
                return;
              }
              const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
              done(
                new AppError('rate_limited', `Too many ${budget === 'submit' ? 'submits' : 'queries'} for this API key; retry after ${retryAfter} s`, {
                  headers: { 'retry-after': String(retryAfter) },
                }),
              );
            },
          );
      };
      const rates = ratesFor(keyHash);
      if (rates instanceof Promise) rates.then(consume, (err: unknown) => done(err as Error));
      else consume(rates);
    };
  const submit = hook('submit');
  const query = hook('query');

  // Route-level onRequest hooks run after the scope's auth hook, before the body is read.
  scope.addHook('onRoute', (route) => {
    const writes = routeHasMethod(route, 'POST') || routeHasMethod(route, 'DELETE');
    route.onRequest = [...hookList(route.onRequest), writes ? submit : query];
  });
}
