import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { CSRF_HEADER } from '../contract/console.js';
import { sessionCookieValue, type ConsoleSessions } from '../console/sessions.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import { authenticate } from './key-rules.js';
import { hashApiKey } from './keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The calling API key, set by the auth hook (not on `keyCheckedByRoute` routes). */
    apiKey: ApiKeyRecord;
    /** SHA-256 of the bearer key, set by the auth hook on every protected route. */
    apiKeyHash: string;
  }
  interface FastifyContextConfig {
    /**
     * The route checks the key itself, in the same query that reads what it needs (the poll path:
     * `TaskService.getTaskForKeyHash`); the hook only parses and hashes it.
     */
    keyCheckedByRoute?: boolean;
  }
}

/**
 * Hashes of recently seen Authorization headers: SHA-256 is a pure function, so caching it never
 * outlives a revocation. Bounded in entries and in bytes: only headers a real key can make are
 * kept (`Bearer ` + at most 200 characters: `mg_` keys have 46, bootstrap keys at most 200), so the
 * cache holds at most {@link HASH_CACHE_SIZE} x ({@link MAX_CACHED_HEADER} + 64) characters (about
 * 6.4 MB); longer headers are hashed on every request. Keyed by the header string itself: a hit
 * costs one map lookup, and no key string sliced out of a longer header is kept alive.
 */
const hashCache = new Map<string, string>();
const HASH_CACHE_SIZE = 10_000;
const MAX_CACHED_HEADER = 256;

/** What the key hash cache holds (for tests and diagnostics; walks the cache). */
export function keyHashCacheStats(): { entries: number; chars: number } {
  let chars = 0;
  for (const [header, hash] of hashCache) chars += header.length + hash.length;
  return { entries: hashCache.size, chars };
}

/** The token of an Authorization header of the Bearer scheme (the scheme's name in any case, RFC 9110 11.1); undefined for any other. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** The SHA-256 of the bearer key of an Authorization header; 401 when it is missing or not Bearer. */
export function bearerKeyHash(header: string | undefined): string {
  if (!header) throw new AppError('missing_api_key', 'Missing Authorization header; send "Authorization: Bearer <API_KEY>"');
  const cacheable = header.length <= MAX_CACHED_HEADER;
  const cached = cacheable ? hashCache.get(header) : undefined;
  if (cached !== undefined) return cached;
  const token = bearerToken(header);
  if (token === undefined) throw new AppError('missing_api_key', 'Authorization header must be "Bearer <API_KEY>"');
  const hash = hashApiKey(token);
  if (cacheable) {
    if (hashCache.size >= HASH_CACHE_SIZE) hashCache.delete(hashCache.keys().next().value!);
    hashCache.set(header, hash);
  }
  return hash;
}

export interface AuthOptions {
  /** The clock keys' expiry and grace periods are read against (default `Date.now`; tests step it). */
  now?: () => number;
  /** Told the id of each key a request was authenticated with (its last-used time, G308). */
  onKeyUsed?: (keyId: string, now: number) => void;
  /** Web console sessions: a request with the session cookie and no Authorization header acts as the session's key (G361, G362). */
  sessions?: ConsoleSessions;
}

/**
 * Bearer authentication for every route registered in `scope` (an encapsulated plugin holding the
 * API routes; health, docs and signed downloads live outside it). The key is hashed and looked up
 * by hash on every request, so a revoked key fails at once; an expired key (G305) or a rotated-out
 * secret past its grace (G307) is refused however long the record was cached.
 */
export function registerAuth(scope: FastifyInstance, keys: KeyStore, options: AuthOptions = {}): void {
  const now = options.now ?? Date.now;
  scope.decorateRequest('apiKey', null as unknown as ApiKeyRecord);
  scope.decorateRequest('apiKeyHash', '');
  scope.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const checkKey = (): void => {
      if (request.routeOptions.config.keyCheckedByRoute) {
        done();
        return;
      }
      const at = now();
      authenticate(keys, request.apiKeyHash, at).then(
        (key) => {
          request.apiKey = key;
          options.onKeyUsed?.(key.id, at);
          done();
        },
        (err: unknown) => done(err as Error),
      );
    };
    const cookie = options.sessions && request.headers.authorization === undefined ? sessionCookieValue(request.headers.cookie) : undefined;
    if (cookie !== undefined) {
      options.sessions!.requestSession(cookie, request.method, request.headers[CSRF_HEADER]).then(
        (session) => {
          request.apiKeyHash = session.keyHash;
          checkKey();
        },
        (err: unknown) => done(err as Error),
      );
      return;
    }
    try {
      request.apiKeyHash = bearerKeyHash(request.headers.authorization);
    } catch (err) {
      done(err as Error);
      return;
    }
    checkKey();
  });
}
