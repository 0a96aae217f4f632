import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import { hashApiKey, invalidKeyError } from './keys.js';

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

/** Hashes of recently seen keys: SHA-256 is a pure function, so caching it never outlives a revocation. */
const hashCache = new Map<string, string>();
const HASH_CACHE_SIZE = 10_000;

function cachedKeyHash(secret: string): string {
  let hash = hashCache.get(secret);
  if (hash === undefined) {
    hash = hashApiKey(secret);
    if (hashCache.size >= HASH_CACHE_SIZE) hashCache.delete(hashCache.keys().next().value!);
    hashCache.set(secret, hash);
  }
  return hash;
}

/** The SHA-256 of the bearer key of an Authorization header; 401 when it is missing or not Bearer. */
export function bearerKeyHash(header: string | undefined): string {
  if (!header) throw new AppError('missing_api_key', 'Missing Authorization header; send "Authorization: Bearer <API_KEY>"');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('missing_api_key', 'Authorization header must be "Bearer <API_KEY>"');
  return cachedKeyHash(match[1]!);
}

/**
 * Bearer authentication for every route registered in `scope` (an encapsulated plugin holding the
 * API routes; health, docs and signed downloads live outside it). The key is hashed and looked up
 * by hash on every request, so a revoked key fails at once.
 */
export function registerAuth(scope: FastifyInstance, keys: KeyStore): void {
  scope.decorateRequest('apiKey', null as unknown as ApiKeyRecord);
  scope.decorateRequest('apiKeyHash', '');
  scope.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    try {
      request.apiKeyHash = bearerKeyHash(request.headers.authorization);
      if (!request.routeOptions.config.keyCheckedByRoute) request.apiKey = authenticate(keys, request.apiKeyHash);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
}

/** The active key with this hash, or 401. */
export function authenticate(keys: KeyStore, keyHash: string): ApiKeyRecord {
  const key = keys.findActiveByHash(keyHash);
  if (!key) throw invalidKeyError();
  return key;
}
