import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newAccountId, newKeyId } from '../ids.js';
import type { ApiKeyRecord, KeyStore, NewAccount, NewAuditEntry } from '../store/types.js';

const KEY_PREFIX = 'mg_';

/** The 401 for a bearer key that is unknown or revoked. */
export const invalidKeyError = (): AppError => new AppError('invalid_api_key', 'Invalid API key: it is unknown or has been revoked');

/** SHA-256 of a key, hex. Keys are only ever stored and looked up by this. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * Whose credits a new key spends (G200): an existing account, or (without `accountId`) an account
 * of its own, created with it and named after it, with `startingMicro` credits.
 */
export interface KeyAccount {
  accountId?: string;
  startingMicro?: number;
}

/** What a new key is besides its name and account: role, allow-list, expiry, limits, webhook URL (G300-G306). */
export type KeyFields = Partial<
  Pick<ApiKeyRecord, 'role' | 'models' | 'expiresAt' | 'submitRate' | 'queryRate' | 'spendCapMicro' | 'maxInFlight' | 'webhookUrl'>
>;

export interface NewKeyOptions {
  fields?: KeyFields;
  /** The audit entry written with the key (G302), made from the stored record and the account created with it. */
  audit?: (record: ApiKeyRecord, account: NewAccount | undefined) => NewAuditEntry;
}

/** A new secret: `mg_` and 256 random bits (G2). */
export const newKeySecret = (): string => KEY_PREFIX + randomBytes(32).toString('base64url');

/** The part of a secret kept to recognise it (never enough to use it). */
export const secretPrefix = (secret: string): string => secret.slice(0, 8);

/** Creates a key and stores its hash; the returned secret is shown once and never stored. */
export async function createApiKey(
  keys: KeyStore,
  name: string,
  account: KeyAccount = {},
  now = Date.now(),
  options: NewKeyOptions = {},
): Promise<{ secret: string; record: ApiKeyRecord }> {
  const secret = newKeySecret();
  return { secret, record: await storeApiKey(keys, secret, name, account, now, options) };
}

/**
 * Stores a key whose secret the operator chose (MEDIAGATE_BOOTSTRAP_KEY); idempotent for an existing
 * hash, also when another process starting at the same time stores it first (the hash is unique).
 */
export async function ensureApiKey(
  keys: KeyStore,
  secret: string,
  name: string,
  account: KeyAccount = {},
  now = Date.now(),
  options: NewKeyOptions = {},
): Promise<ApiKeyRecord> {
  const hash = hashApiKey(secret);
  const found = await keys.findByHash(hash);
  if (found) return found;
  try {
    return await storeApiKey(keys, secret, name, account, now, options);
  } catch (err) {
    const stored = await keys.findByHash(hash); // another process inserted it between the look-up and the insert
    if (stored) return stored;
    throw err;
  }
}

async function storeApiKey(keys: KeyStore, secret: string, name: string, account: KeyAccount, now: number, options: NewKeyOptions): Promise<ApiKeyRecord> {
  const own: NewAccount | undefined =
    account.accountId === undefined ? { id: newAccountId(), name, createdAt: now, startingMicro: account.startingMicro ?? 0 } : undefined;
  const record: ApiKeyRecord = {
    id: newKeyId(),
    name,
    accountId: account.accountId ?? own!.id,
    prefix: secretPrefix(secret),
    createdAt: now,
    revokedAt: null,
    ...options.fields,
  };
  await keys.insert({ ...record, hash: hashApiKey(secret) }, own, options.audit?.(record, own));
  return record;
}
