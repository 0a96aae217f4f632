import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import { hashApiKey } from './keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The calling API key, set by the auth hook on every protected route. */
    apiKey: ApiKeyRecord;
  }
}

/**
 * Bearer authentication for every route registered in `scope` (an encapsulated plugin holding the
 * API routes; health, docs and signed downloads live outside it). The key is hashed and looked up
 * by hash on every request, so a revoked key fails at once.
 */
export function registerAuth(scope: FastifyInstance, keys: KeyStore): void {
  scope.decorateRequest('apiKey', null as unknown as ApiKeyRecord);
  scope.addHook('onRequest', async (request: FastifyRequest) => {
    request.apiKey = authenticate(keys, request.headers.authorization);
  });
}

export function authenticate(keys: KeyStore, header: string | undefined): ApiKeyRecord {
  if (!header) throw new AppError('missing_api_key', 'Missing Authorization header; send "Authorization: Bearer <API_KEY>"');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('missing_api_key', 'Authorization header must be "Bearer <API_KEY>"');
  const key = keys.findActiveByHash(hashApiKey(match[1]!));
  if (!key) throw new AppError('invalid_api_key', 'Invalid API key: it is unknown or has been revoked');
  return key;
}
