/**
 * Standard Webhooks (standardwebhooks.com), the scheme Replicate signs its webhooks with (
 * G159): `webhook-id` (the same for a delivery sent again), `webhook-timestamp` (Unix seconds) and
 * `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>` (entries of other
 * versions are skipped) of `<id>.<timestamp>.<raw body>`, keyed with the base64 part of the secret
 * (`whsec_<base64>`). The time is checked first (delivery.ts); signatures are compared in constant
 * time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { headerOf, malformed, timeRefusal, type CallbackRefusal } from './delivery.js';

/** The signed parts of a delivery. */
export interface StandardWebhook {
  id: string;
  timestamp: string;
  /** The decoded `v1` signatures (32 bytes each). */
  signatures: Buffer[];
}

const ID = /^[\x21-\x7e]{1,256}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The signed parts of a delivery, or why it cannot be one (a header missing or unreadable, a time outside the tolerance). */
export function readStandardWebhook(headers: Record<string, string | string[] | undefined>, nowMs: number): StandardWebhook | CallbackRefusal {
  const id = headerOf(headers, 'webhook-id');
  if (id === undefined || id === '') return malformed('webhook-id', 'is required');
  if (!ID.test(id)) return malformed('webhook-id', 'must be 1 to 256 printable characters without spaces');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const late = timeRefusal('webhook-timestamp', timestamp, nowMs);
  if (late) return late;
  const header = headerOf(headers, 'webhook-signature');
  if (header === undefined || header.trim() === '') return malformed('webhook-signature', 'is required');
  const signatures = header.split(' ').flatMap((entry) => {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || sig === undefined || !BASE64.test(sig)) return [];
    const bytes = Buffer.from(sig, 'base64');
    return bytes.length === 32 ? [bytes] : [];
  });
  if (signatures.length === 0) return malformed('webhook-signature', 'must list one or more "v1,<base64 HMAC-SHA256>" signatures, separated by spaces');
  return { id, timestamp: timestamp!, signatures };
}

/** The key of a secret: the base64 after `whsec_` (or the whole secret without that prefix), decoded. */
export function keyOfSecret(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** The signature of a delivery's content under `secret`. */
export function signatureOf(id: string, timestamp: string, body: Buffer, secret: string): Buffer {
  return createHmac('sha256', keyOfSecret(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

/** Whether one of the delivery's signatures is the one `secret` makes of its content. */
export function signedWith(delivery: StandardWebhook, body: Buffer, secret: string): boolean {
  const expected = signatureOf(delivery.id, delivery.timestamp, body, secret);
  return delivery.signatures.some((s) => timingSafeEqual(s, expected));
}
