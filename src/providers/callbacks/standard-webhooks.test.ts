import { createHmac, randomBytes } from 'node:crypto';
import { validateWebhook } from 'replicate';
import { describe, expect, it } from 'vitest';
import { readStandardWebhook, signedWith, type StandardWebhook } from './standard-webhooks.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const NOW = 1_760_000_000_000;
const ts = String(NOW / 1000);
const body = Buffer.from('{"id":"p1","status":"succeeded","output":["https://x/y.png"]}');

/** Signs as the Standard Webhooks reference does, written out here apart from the code under test. */
const sign = (id: string, timestamp: string, content: Buffer, key = secret): string =>
  `v1,${createHmac('sha256', Buffer.from(key.split('_').pop()!, 'base64'))
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), content]))
    .digest('base64')}`;

const headersOf = (signature: string, id = 'msg_1', timestamp = ts) => ({ 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });

function read(headers: Record<string, string>, now = NOW): StandardWebhook {
  const d = readStandardWebhook(headers, now);
  if ('valid' in d) throw new Error(d.message);
  return d;
}

describe('Standard Webhooks signatures (Replicate)', () => {
  it('a delivery signed with the secret holds, as the official replicate client finds too', async () => {
    const headers = headersOf(sign('msg_1', ts, body));
    expect(signedWith(read(headers), body, secret)).toBe(true);
    const signature = headers['webhook-signature'];
    expect(await validateWebhook({ id: 'msg_1', timestamp: ts, signature, body: body.toString(), secret })).toBe(true);
    expect(await validateWebhook(new Request('https://gw.example/cb', { method: 'POST', headers, body }), secret)).toBe(true);
  });

  it('another secret, a changed body, id or timestamp do not hold', () => {
    const headers = headersOf(sign('msg_1', ts, body));
    expect(signedWith(read(headers), body, `whsec_${randomBytes(24).toString('base64')}`)).toBe(false);
    expect(signedWith(read(headers), Buffer.from(body.toString().replace('succeeded', 'failed')), secret)).toBe(false);
    expect(signedWith(read({ ...headers, 'webhook-id': 'msg_2' }), body, secret)).toBe(false);
    expect(signedWith(read({ ...headers, 'webhook-timestamp': String(NOW / 1000 + 1) }), body, secret)).toBe(false);
  });

  it('covers the raw bytes: a body that is not UTF-8 is signed as sent', () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(signedWith(read(headersOf(sign('msg_1', ts, raw))), raw, secret)).toBe(true);
    expect(signedWith(read(headersOf(sign('msg_1', ts, raw))), Buffer.from(raw.toString('utf8')), secret)).toBe(false);
  });

  it('several signatures (a rotated secret): one that holds is enough; other versions are skipped', () => {
    const good = sign('msg_1', ts, body);
    const other = sign('msg_1', ts, body, `whsec_${randomBytes(24).toString('base64')}`);
    expect(signedWith(read(headersOf(`${other} ${good}`)), body, secret)).toBe(true);
    expect(signedWith(read(headersOf(`v1a,${good.slice(3)} ${other}`)), body, secret)).toBe(false);
    expect(signedWith(read(headersOf(`v2,abc ${good}`)), body, secret)).toBe(true);
    expect(readStandardWebhook(headersOf(`v1a,${good.slice(3)}`), NOW)).toMatchObject({ valid: false, kind: 'malformed', header: 'webhook-signature' });
  });

  it('a time more than 300 s away, either way, is refused as stale before any key is used; 300 s is accepted', () => {
    const at = (seconds: number) => headersOf(sign('msg_1', String(seconds), body), 'msg_1', String(seconds));
    expect(readStandardWebhook(at(NOW / 1000 - 301), NOW)).toMatchObject({
      valid: false,
      kind: 'stale',
      header: 'webhook-timestamp',
      message: expect.stringMatching(/301 s before this gateway's clock/),
    });
    expect(readStandardWebhook(at(NOW / 1000 + 301), NOW)).toMatchObject({ valid: false, kind: 'stale', message: expect.stringMatching(/301 s after/) });
    expect(signedWith(read(at(NOW / 1000 - 300)), body, secret)).toBe(true);
  });

  it('a header missing or unreadable is malformed, naming it', () => {
    const headers = headersOf(sign('msg_1', ts, body));
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _gone, ...rest } = headers;
      expect(readStandardWebhook(rest, NOW)).toMatchObject({ valid: false, kind: 'malformed', header: name, message: `${name}: is required` });
    }
    expect(readStandardWebhook({ ...headers, 'webhook-timestamp': '2024-01-01' }, NOW)).toMatchObject({ kind: 'malformed', header: 'webhook-timestamp' });
    expect(readStandardWebhook({ ...headers, 'webhook-id': 'a b' }, NOW)).toMatchObject({ kind: 'malformed', header: 'webhook-id' });
    expect(readStandardWebhook({ ...headers, 'webhook-signature': 'v1,not base64!' }, NOW)).toMatchObject({ kind: 'malformed', header: 'webhook-signature' });
    expect(readStandardWebhook({ ...headers, 'webhook-signature': `v1,${randomBytes(16).toString('base64')}` }, NOW)).toMatchObject({ kind: 'malformed' });
  });
});
