/**
 * What a key may do, decided from its record and the time (no HTTP, no store writes): whether it is
 * usable now (expiry G305, a rotated-out secret's grace G307), whether it may create (roles G301)
 * and for which models (allow-lists G304). The auth hook, the poll path, open requests, the task
 * service and the chat route all ask here.
 */
import { FAMILIES, type FamilyId } from '../contract/families.js';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../store/types.js';
import { invalidKeyError } from './keys.js';

/** The families a model pattern may name: the task families and chat. */
export type ModelFamily = FamilyId | 'chat';
export const MODEL_FAMILIES: readonly ModelFamily[] = [...FAMILIES, 'chat'];

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

/** Why a key found by its hash cannot be used at `now`, or undefined when it can. */
export function keyRefusal(key: ApiKeyRecord, now: number): AppError | undefined {
  if (key.graceUntil !== undefined && key.graceUntil <= now) {
    return new AppError('invalid_api_key', 'Invalid API key: it was replaced by a new secret (rotated) and its grace period is over');
  }
  if (key.expiresAt != null && key.expiresAt <= now) {
    return new AppError(
      'key_expired',
      `This API key expired at ${iso(key.expiresAt)} (expires_at ${Math.floor(key.expiresAt / 1000)}); ask the operator for a later expiry or a new key`,
    );
  }
  return undefined;
}

/** The usable key with this hash at `now`: 401 `invalid_api_key` (unknown, revoked, rotated out) or `key_expired`. */
export async function authenticate(keys: Pick<KeyStore, 'findActiveByHash'>, keyHash: string, now: number): Promise<ApiKeyRecord> {
  const key = await keys.findActiveByHash(keyHash);
  if (!key) throw invalidKeyError();
  const refusal = keyRefusal(key, now);
  if (refusal) throw refusal;
  return key;
}

/** Admin keys never create tasks, chat or upload (G301): 403 `caller_only`. */
export function requireCaller(key: ApiKeyRecord): void {
  if (key.role === 'admin') {
    throw new AppError(
      'caller_only',
      'This is an admin key: it manages the gateway at /admin/v1 and may read the public API, but creates nothing; use a caller key',
    );
  }
}

/** Whether an allow-list (null: every model) lets a key use `model` of `family`: its name, or `family:*`. */
export function modelAllowed(models: readonly string[] | null | undefined, family: ModelFamily, model: string): boolean {
  return models == null || models.includes(model) || models.includes(`${family}:*`);
}

/** 403 `model_not_allowed` naming the model, unless the key may use it (G304). */
export function requireModelAllowed(key: ApiKeyRecord, family: ModelFamily, model: string): void {
  if (modelAllowed(key.models, family, model)) return;
  const list = key.models!.length === 0 ? 'no models' : key.models!.join(', ');
  throw new AppError('model_not_allowed', `This API key may not use model ${model} (it may use: ${list})`, { param: 'model' });
}

/** Both checks of a create or a chat request, in their order: the role, then the model. */
export function requireMayCreate(key: ApiKeyRecord, family: ModelFamily, model: string): void {
  requireCaller(key);
  requireModelAllowed(key, family, model);
}
