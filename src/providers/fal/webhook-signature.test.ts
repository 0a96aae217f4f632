import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519KeysOf, readFalWebhook, signedByFal, type FalWebhook } from './webhook-signature.js';

const NOW = 1_760_000_000_000;
const ts = String(NOW / 1000);
const body = Buffer.from('{"request_id":"r-1","gateway_request_id":"r-1","status":"OK","payload":{"images":[]}}');

const pair = () => generateKeyPairSync('ed25519');
const jwkOf = (key: KeyObject) => ({ ...key.export({ format: 'jwk' }), kid: 'k', use: 'sig', alg: 'EdDSA' });
const { publicKey, privateKey } = pair();
const keys = ed25519KeysOf({ keys: [jwkOf(publicKey)] });

/** Signs as fal's reference describes, written out here apart from the code under test. */
function headersFor(content: Buffer, key = privateKey, requestId = 'r-1', userId = 'u-9', timestamp = ts): Record<string, string> {
  const message = `${requestId}\n${userId}\n${timestamp}\n${createHash('sha256').update(content).digest('hex')}`;
  return {
    'x-fal-webhook-request-id': requestId,
    'x-fal-webhook-user-id': userId,
    'x-fal-webhook-timestamp': timestamp,
    'x-fal-webhook-signature': sign(null, Buffer.from(message), key).toString('hex'),
  };
}

function read(headers: Record<string, string>, now = NOW): FalWebhook {
  const d = readFalWebhook(headers, now);
  if ('valid' in d) throw new Error(d.message);
  return d;
}

describe('fal webhook signatures (ED25519)', () => {
  it('a delivery signed with a key of the set holds; one of several keys is enough', () => {
    expect(signedByFal(read(headersFor(body)), body, keys)).toBe(true);
    const other = pair();
    const both = ed25519KeysOf({ keys: [jwkOf(other.publicKey), jwkOf(publicKey)] });
    expect(signedByFal(read(headersFor(body)), body, both)).toBe(true);
  });

  it('another key, a changed body, request id, user id or timestamp do not hold', () => {
    expect(signedByFal(read(headersFor(body, pair().privateKey)), body, keys)).toBe(false);
    expect(signedByFal(read(headersFor(body)), Buffer.from(body.toString().replace('"OK"', '"ERROR"')), keys)).toBe(false);
    const headers = headersFor(body);
    expect(signedByFal(read({ ...headers, 'x-fal-webhook-request-id': 'r-2' }), body, keys)).toBe(false);
    expect(signedByFal(read({ ...headers, 'x-fal-webhook-user-id': 'u-8' }), body, keys)).toBe(false);
    expect(signedByFal(read({ ...headers, 'x-fal-webhook-timestamp': String(NOW / 1000 - 1) }), body, keys)).toBe(false);
  });

  it('a time more than 300 s away is stale before any key is used; 300 s is accepted', () => {
    const at = (s: number) => headersFor(body, privateKey, 'r-1', 'u-9', String(s));
    expect(readFalWebhook(at(NOW / 1000 - 301), NOW)).toMatchObject({ valid: false, kind: 'stale', header: 'x-fal-webhook-timestamp' });
    expect(readFalWebhook(at(NOW / 1000 + 400), NOW)).toMatchObject({ valid: false, kind: 'stale' });
    expect(signedByFal(read(at(NOW / 1000 + 300)), body, keys)).toBe(true);
  });

  it('a header missing or unreadable is malformed, naming it', () => {
    const headers = headersFor(body);
    for (const name of Object.keys(headers)) {
      const rest = { ...headers };
      delete rest[name];
      expect(readFalWebhook(rest, NOW)).toMatchObject({ valid: false, kind: 'malformed', header: name, message: `${name}: is required` });
    }
    expect(readFalWebhook({ ...headers, 'x-fal-webhook-signature': 'zz' }, NOW)).toMatchObject({ kind: 'malformed', header: 'x-fal-webhook-signature' });
    expect(readFalWebhook({ ...headers, 'x-fal-webhook-timestamp': '1e9' }, NOW)).toMatchObject({ kind: 'malformed', header: 'x-fal-webhook-timestamp' });
  });

  it('a key set: ED25519 keys only; none is an error', () => {
    const { publicKey: rsa } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(ed25519KeysOf({ keys: [rsa.export({ format: 'jwk' }), jwkOf(publicKey), { kty: 'OKP', crv: 'Ed25519', x: 'short' }] })).toHaveLength(1);
    expect(() => ed25519KeysOf({ keys: [rsa.export({ format: 'jwk' })] })).toThrow(/no ED25519 key/);
    expect(() => ed25519KeysOf({ nope: [] })).toThrow(/no "keys" list/);
    expect(() => ed25519KeysOf(null)).toThrow(/no "keys" list/);
  });
});
