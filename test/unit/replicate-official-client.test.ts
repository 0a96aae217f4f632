/**
 * The official `replicate` client against the fake predictions API: the fake speaks the protocol
 * the client was written for (create by model and by version, get, wait, cancel, problem+json
 * errors, throttling), so the provider's tests against the fake stand for the real API. Its webhooks
 * are signed as the client's `validateWebhook` checks, with the secret the client reads.
 */
import Replicate, { validateWebhook } from 'replicate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLUX_SCHNELL, startFakeReplicate, throttled, VIDEO_VERSION, type FakeReplicate } from '../fakes/replicate.js';
import { waitFor } from '../helpers/wait-for.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

let fake: FakeReplicate;
let client: Replicate;
beforeAll(async () => {
  fake = await startFakeReplicate();
  client = new Replicate({ auth: fake.apiKey, baseUrl: fake.baseUrl, useFileOutput: false });
});
afterAll(async () => {
  await fake?.close();
});

describe('the official replicate client against the fake', () => {
  it('creates a prediction of an official model, and waits for it to succeed with file URLs', async () => {
    const created = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a fox', aspect_ratio: '16:9', output_format: 'png' } });
    expect(created).toMatchObject({ status: 'starting', model: FLUX_SCHNELL.name });
    const done = await client.wait(created, { interval: 10 });
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\/.+\.png$/)]);
    const again = await client.predictions.get(created.id);
    expect(again.id).toBe(created.id);
  });

  it('creates by version and cancels', async () => {
    const created = await client.predictions.create({ version: VIDEO_VERSION, input: { prompt: 'waves' } });
    const cancelled = await client.predictions.cancel(created.id);
    expect(cancelled.status).toBe('canceled');
    expect(fake.cancels).toContain(created.id);
  });

  it("surfaces invalid input as the client's ApiError with the 422 problem body", async () => {
    const err = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a fox', aspect_ratio: '7:3' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { response?: Response }).response?.status).toBe(422);
    expect((err as Error).message).toContain('aspect_ratio must be one of the following');
  });

  it('is throttled with retry-after and the client retries on its own', async () => {
    const created = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a hare' } });
    fake.script(throttled(0));
    const before = fake.requests.length;
    const got = await client.predictions.get(created.id);
    expect(got.id).toBe(created.id);
    expect(fake.requests.length - before).toBe(2);
  });
});

describe("the fake's webhooks, checked by the official client", () => {
  it('a create naming a webhook: the completed prediction is POSTed there, signed with the secret webhooks.default.secret.get() answers, as validateWebhook checks', async () => {
    const window = openSecondsWindow();
    const receiver = await startWebhookReceiver();
    try {
      const created = await client.predictions.create({
        model: FLUX_SCHNELL.name,
        input: { prompt: 'a heron' },
        webhook: `${receiver.origin}/hook?x=1`,
        webhook_events_filter: ['completed'],
      });
      const { key } = await client.webhooks.default.secret.get();
      expect(key).toMatch(/^whsec_/);
      const [delivery] = await waitFor(() => (receiver.received.length > 0 ? receiver.received : undefined), 10_000, 'the webhook');
      expect(delivery!.path).toBe('/hook?x=1');
      expect(delivery!.headers['content-type']).toBe('application/json');
      const body = delivery!.body.toString();
      expect(JSON.parse(body)).toMatchObject({ id: created.id, status: 'succeeded', output: [expect.stringMatching(/\.webp$/)] });
      const request = new Request(`${receiver.origin}/hook`, { method: 'POST', headers: delivery!.headers as Record<string, string>, body });
      expect(await validateWebhook(request, key)).toBe(true);
      expect(
        await validateWebhook(
          new Request(`${receiver.origin}/hook`, {
            method: 'POST',
            headers: delivery!.headers as Record<string, string>,
            body: body.replace('succeeded', 'failed'),
          }),
          key,
        ),
      ).toBe(false);
      expect(delivery!.headers['webhook-id']).toMatch(/^msg_/);
      expectInWindow(Number(delivery!.headers['webhook-timestamp']), window);
      expect(receiver.received).toHaveLength(1); // only the events asked for
    } finally {
      await receiver.close();
    }
  });

  it('every event when the create names none; a webhook that is not a URL is a 422 naming it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const created = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a crane' }, webhook: receiver.origin });
      await waitFor(() => (fake.predictions.get(created.id)?.status === 'succeeded' ? true : undefined), 10_000, 'the prediction to end');
      await fake.webhooks.settled();
      const events = fake.webhooks.deliveries.filter((d) => d.predictionId === created.id).map((d) => d.event);
      expect(events[0]).toBe('start');
      expect(events).toContain('logs');
      expect(events.slice(-2)).toEqual(['output', 'completed']);
      const err = await fetch(`${fake.baseUrl}/models/${FLUX_SCHNELL.name}/predictions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { prompt: 'x' }, webhook: 'not a url' }),
      });
      expect(err.status).toBe(422);
      expect(((await err.json()) as { invalid_fields: Array<{ field: string }> }).invalid_fields[0]!.field).toBe('webhook');
    } finally {
      await receiver.close();
    }
  });
});
