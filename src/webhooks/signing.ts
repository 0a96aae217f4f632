/**
 * Standard Webhooks signatures (G209): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed
 * with the base64-decoded part of the key's `whsec_` secret after the prefix.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { WebhookSecrets } from '../store/webhook-types.js';

const PREFIX = 'whsec_';
/** Random bytes of a new secret (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;
/** How long the secret a rotation replaced still signs deliveries, as a second signature (G209). */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

export const newWebhookSecret = (): string => PREFIX + randomBytes(SECRET_BYTES).toString('base64');

/** One `v1,` signature of a message with one secret. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * The `webhook-signature` header: the key's secret at send time, and during the grace period after
 * a rotation also the previous one, space-separated (receivers accept a message any of them verifies).
 */
export function signatureHeader(secrets: WebhookSecrets, id: string, timestampSeconds: number, body: string, now: number): string {
  const signatures = [signWebhook(secrets.current, id, timestampSeconds, body)];
  if (secrets.previous && secrets.rotatedAt !== null && now - secrets.rotatedAt < ROTATION_GRACE_MS) {
    signatures.push(signWebhook(secrets.previous, id, timestampSeconds, body));
  }
  return signatures.join(' ');
}
