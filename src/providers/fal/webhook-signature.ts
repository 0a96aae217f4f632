/**
 * fal's webhook signatures (G160), from fal's webhook reference: a delivery carries
 * `x-fal-webhook-request-id`, `x-fal-webhook-user-id`, `x-fal-webhook-timestamp` (Unix seconds)
 * and `x-fal-webhook-signature`, the hex ED25519 signature of
 * `<request id>\n<user id>\n<timestamp>\n<hex SHA-256 of the raw body>`, made with one of the keys fal
 * publishes as a JSON Web Key Set (`{keys: [{kty: "OKP", crv: "Ed25519", x: <base64url>}]}`).
 * The time is checked first (callbacks/delivery.ts); keys of another kind in the set are skipped.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { headerOf, malformed, timeRefusal, type CallbackRefusal } from '../callbacks/delivery.js';

/** The signed parts of a delivery. */
export interface FalWebhook {
  requestId: string;
  userId: string;
  timestamp: string;
  signature: Buffer;
}

const TOKEN = /^[\x21-\x7e]{1,256}$/;

/** The signed parts of a delivery, or why it cannot be one (a header missing or unreadable, a time outside the tolerance). */
export function readFalWebhook(headers: Record<string, string | string[] | undefined>, nowMs: number): FalWebhook | CallbackRefusal {
  const requestId = headerOf(headers, 'x-fal-webhook-request-id');
  if (!requestId) return malformed('x-fal-webhook-request-id', 'is required');
  if (!TOKEN.test(requestId)) return malformed('x-fal-webhook-request-id', 'must be 1 to 256 printable characters without spaces');
  const userId = headerOf(headers, 'x-fal-webhook-user-id');
  if (!userId) return malformed('x-fal-webhook-user-id', 'is required');
  if (!TOKEN.test(userId)) return malformed('x-fal-webhook-user-id', 'must be 1 to 256 printable characters without spaces');
  const timestamp = headerOf(headers, 'x-fal-webhook-timestamp');
  const late = timeRefusal('x-fal-webhook-timestamp', timestamp, nowMs);
  if (late) return late;
  const hex = headerOf(headers, 'x-fal-webhook-signature');
  if (!hex) return malformed('x-fal-webhook-signature', 'is required');
  if (!/^[0-9a-fA-F]{128}$/.test(hex)) return malformed('x-fal-webhook-signature', 'must be an ED25519 signature: 128 hex digits');
  return { requestId, userId, timestamp: timestamp!, signature: Buffer.from(hex, 'hex') };
}

/** What fal signs of a delivery. */
export function signedContentOf(d: Pick<FalWebhook, 'requestId' | 'userId' | 'timestamp'>, body: Buffer): Buffer {
  const digest = createHash('sha256').update(body).digest('hex');
  return Buffer.from(`${d.requestId}\n${d.userId}\n${d.timestamp}\n${digest}`, 'utf8');
}

/** Whether one of `keys` made the delivery's signature. */
export function signedByFal(d: FalWebhook, body: Buffer, keys: readonly KeyObject[]): boolean {
  const content = signedContentOf(d, body);
  return keys.some((key) => verify(null, content, key, d.signature));
}

/** The ED25519 public keys of a JSON Web Key Set (other keys skipped); none is an error. */
export function ed25519KeysOf(jwks: unknown): KeyObject[] {
  const list = jwks && typeof jwks === 'object' ? (jwks as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list)) throw new Error('the key set has no "keys" list');
  const keys = list.flatMap((k: unknown) => {
    const jwk = k as { kty?: unknown; crv?: unknown; x?: unknown } | null | undefined;
    if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(jwk.x)) return [];
    try {
      return [createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' })];
    } catch {
      return [];
    }
  });
  if (keys.length === 0) throw new Error('the key set has no ED25519 key (kty OKP, crv Ed25519)');
  return keys;
}
