import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { Mediagate, verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.js';

// The SDK's Standard Webhooks verifier (G235) against signatures made by an independent
// implementation, the `standardwebhooks` package.
const secret = `whsec_${Buffer.from('a secret of thirty-two bytes!!!!').toString('base64')}`;
const signer = new Webhook(secret);
const body = JSON.stringify({ id: 'task_1', object: 'image.generation', status: 'completed', note: 'é€' });

function signed(at: Date, id = 'msg_1', payload = body): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(id, at, payload) };
}

describe('webhooks.verify', () => {
  it('accepts a delivery signed by standardwebhooks and answers the parsed body (headers as a record or a Headers)', async () => {
    const headers = signed(new Date());
    const client = new Mediagate({ baseUrl: 'http://gateway.invalid', apiKey: 'k' });
    await expect(client.webhooks.verify(body, headers, secret)).resolves.toMatchObject({ id: 'task_1', note: 'é€' });
    await expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret)).resolves.toMatchObject({ status: 'completed' });
  });

  it('accepts when one of several signatures matches (a rotated secret)', async () => {
    const headers = signed(new Date());
    const other = new Webhook(`whsec_${Buffer.from('another secret, also 32 bytes!!!').toString('base64')}`);
    headers['webhook-signature'] = `${other.sign('msg_1', new Date(), body)} v2,abc ${headers['webhook-signature']}`;
    await expect(verifyWebhook(body, headers, secret)).resolves.toBeTruthy();
  });

  it('refuses a changed body, another id, another secret, a missing header, and a timestamp over 5 minutes away', async () => {
    const now = new Date();
    const headers = signed(now);
    const refused = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(WebhookVerificationError);
    await refused(verifyWebhook(body.replace('completed', 'failed'), headers, secret));
    await refused(verifyWebhook(body, { ...headers, 'webhook-id': 'msg_2' }, secret));
    await refused(verifyWebhook(body, headers, `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`));
    await refused(verifyWebhook(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': headers['webhook-timestamp']! }, secret));
    const old = new Date(now.getTime() - 301_000);
    await refused(verifyWebhook(body, signed(old), secret, { now: now.getTime() }));
    await expect(verifyWebhook(body, signed(new Date(now.getTime() - 299_000)), secret, { now: now.getTime() })).resolves.toBeTruthy();
    await refused(verifyWebhook(body, signed(new Date(now.getTime() + 301_000)), secret, { now: now.getTime() }));
    await refused(verifyWebhook(body, headers, 'whsec_'));
  });

  it('agrees with standardwebhooks on what it accepts', async () => {
    const headers = signed(new Date(), 'msg_x', '{"a":1}');
    expect(signer.verify('{"a":1}', headers)).toEqual({ a: 1 });
    await expect(verifyWebhook('{"a":1}', headers, secret)).resolves.toEqual({ a: 1 });
  });
});
