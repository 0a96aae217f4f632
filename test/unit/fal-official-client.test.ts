/**
 * The official `@fal-ai/client` against the fake queue: the fake speaks the protocol the client
 * was written for. The client has no base-URL option; its requestMiddleware sends its
 * `https://queue.fal.run` calls to the fake. It builds status, result and cancel URLs from the
 * endpoint id without the sub-path, which the fake serves (and the trap's wrong URL would be 404).
 * Its `webhookUrl` reaches the fake as `fal_webhook`, whose deliveries are signed as fal's webhook
 * reference says (checked here by a verification written apart from the gateway's).
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { ApiError, createFalClient, ValidationError } from '@fal-ai/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeFal, type FakeFal } from '../fakes/fal.js';
import { waitFor } from '../helpers/wait-for.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

let fake: FakeFal;
let fal: ReturnType<typeof createFalClient>;
beforeAll(async () => {
  fake = await startFakeFal();
  fal = createFalClient({
    credentials: fake.apiKey,
    requestMiddleware: async (request) => ({ ...request, url: request.url.replace('https://queue.fal.run', fake.baseUrl) }),
  });
});
afterAll(async () => {
  await fake?.close();
});

describe('the official fal client against the fake queue', () => {
  it('submits, follows the status while queued, and reads the result', async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox [queue:2]', image_size: 'square_hd' } });
    expect(fake.submits.at(-1)?.headers.authorization).toBe(`Key ${fake.apiKey}`);
    const first = await fal.queue.status('fal-ai/flux/dev', { requestId, logs: true });
    expect(first.status).toBe('IN_QUEUE');
    const done = await fal.queue.subscribeToStatus('fal-ai/flux/dev', { requestId, mode: 'polling', pollInterval: 5 });
    expect(done.status).toBe('COMPLETED');
    const result = await fal.queue.result('fal-ai/flux/dev', { requestId });
    expect(result.requestId).toBe(requestId);
    expect((result.data as { images: Array<{ url: string; width: number }> }).images[0]).toMatchObject({ width: 1024 });
  });

  it('a sub-path model is followed at the URLs without its sub-path, and cancelled there', async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/veo3/image-to-video', {
      input: { prompt: 'waves [hold]', image_url: 'https://example.com/a.png' },
    });
    await fal.queue.cancel('fal-ai/veo3/image-to-video', { requestId });
    expect(fake.calls).toContain(`cancel ${requestId}`);
    expect(fake.notFound).toEqual([]);
  });

  it("a model's refusal shows only on the result, as the client's ValidationError with the fields", async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox', num_images: 9 } });
    await fal.queue.subscribeToStatus('fal-ai/flux/dev', { requestId, mode: 'polling', pollInterval: 5 });
    const err = await fal.queue.result('fal-ai/flux/dev', { requestId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(422);
    expect((err as ValidationError).fieldErrors.map((f) => f.loc.join('.'))).toContain('body.num_images');
  });

  it("a wrong key is the client's ApiError 401", async () => {
    const wrong = createFalClient({
      credentials: 'bad:key',
      requestMiddleware: async (r) => ({ ...r, url: r.url.replace('https://queue.fal.run', fake.baseUrl) }),
    });
    const err = await wrong.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError<unknown>).status).toBe(401);
  });
});

/** fal's signature check as its webhook reference describes it, written out here apart from the gateway's code. */
async function signedByFalKeys(headers: Record<string, string | string[] | undefined>, body: Buffer, jwksUrl: string): Promise<boolean> {
  const jwks = (await (await fetch(jwksUrl)).json()) as { keys: Array<{ kty: string; crv: string; x: string }> };
  const h = (name: string) => String(headers[name]);
  const message = [
    h('x-fal-webhook-request-id'),
    h('x-fal-webhook-user-id'),
    h('x-fal-webhook-timestamp'),
    createHash('sha256').update(body).digest('hex'),
  ].join('\n');
  return jwks.keys
    .filter((k) => k.kty === 'OKP' && k.crv === 'Ed25519')
    .some((k) => {
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' });
      return verify(null, Buffer.from(message), key, Buffer.from(h('x-fal-webhook-signature'), 'hex'));
    });
}

describe("the fake's webhooks, for a submit made by the official client", () => {
  it('webhookUrl is sent as fal_webhook; the result is POSTed there, ED25519-signed with a key of the published set', async () => {
    const window = openSecondsWindow();
    const receiver = await startWebhookReceiver();
    try {
      const { request_id: requestId } = await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox' }, webhookUrl: `${receiver.origin}/fal?task=1` });
      expect(fake.submits.at(-1)?.webhook).toBe(`${receiver.origin}/fal?task=1`);
      const [delivery] = await waitFor(() => (receiver.received.length > 0 ? receiver.received : undefined), 10_000, 'the webhook');
      expect(delivery!.path).toBe('/fal?task=1');
      expect(JSON.parse(delivery!.body.toString())).toMatchObject({
        request_id: requestId,
        gateway_request_id: requestId,
        status: 'OK',
        payload: { images: [{ width: 1024 }] },
      });
      expect(delivery!.headers).toMatchObject({
        'x-fal-webhook-request-id': requestId,
        'x-fal-webhook-user-id': fake.webhooks.userId,
        'content-type': 'application/json',
      });
      expectInWindow(Number(delivery!.headers['x-fal-webhook-timestamp']), window);
      expect(await signedByFalKeys(delivery!.headers, delivery!.body, fake.jwksUrl)).toBe(true);
      expect(await signedByFalKeys(delivery!.headers, Buffer.from(delivery!.body.toString().replace('"OK"', '"ERROR"')), fake.jwksUrl)).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it("a model's refusal is delivered as status ERROR with its error body", async () => {
    const receiver = await startWebhookReceiver();
    try {
      await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox', num_images: 9 }, webhookUrl: receiver.origin });
      const [delivery] = await waitFor(() => (receiver.received.length > 0 ? receiver.received : undefined), 10_000, 'the webhook');
      expect(JSON.parse(delivery!.body.toString())).toMatchObject({
        status: 'ERROR',
        error: 'Invalid status code: 422',
        payload: { detail: [{ loc: ['body', 'num_images'] }] },
      });
      expect(await signedByFalKeys(delivery!.headers, delivery!.body, fake.jwksUrl)).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});
