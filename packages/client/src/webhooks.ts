/**
 * Standard Webhooks verification (https://www.standardwebhooks.com): `webhook-signature` holds
 * space-separated `v1,<base64>` signatures, each an HMAC-SHA256, keyed with the bytes after
 * `whsec_` (base64), of `<webhook-id>.<webhook-timestamp>.<body>`. Web Crypto only, so it runs in
 * browsers, Deno, Bun and Node 20.
 */

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Most seconds between `webhook-timestamp` and now, either way (default 300). */
  toleranceSeconds?: number;
  /** Now, in ms (tests). */
  now?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Compares every byte whatever the first difference (no early exit). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Checks a delivery and answers its body parsed as JSON; throws WebhookVerificationError when a
 * header is missing, the timestamp is outside the tolerance, or no `v1` signature matches.
 * `payload` must be the body exactly as received (text or bytes), not re-serialised JSON.
 */
export async function verifyWebhook<T = unknown>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp is too far from now');
  let key: Uint8Array;
  try {
    key = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('the secret is not whsec_ followed by base64');
  }
  if (key.length === 0) throw new WebhookVerificationError('the secret is empty');
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const subtle = globalThis.crypto.subtle;
  const hmac = await subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = new Uint8Array(await subtle.sign('HMAC', hmac, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) continue;
    let given: Uint8Array;
    try {
      given = base64ToBytes(signature);
    } catch {
      continue;
    }
    if (sameBytes(given, expected)) return JSON.parse(body) as T;
  }
  throw new WebhookVerificationError('no matching signature');
}
