import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, WebhookVerificationError } from '../../../packages/client/src/index.js';
import { waitFor } from '../../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';

// The SDK's webhook calls against the gateway's own deliveries (G235; the deliveries are
// issue 17's webhooks, G208-G214): a task created with `callback_url` is delivered to a local
// receiver, and the SDK's verifier accepts it with the secret the SDK read from the gateway.
let g: ListeningGateway;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [g, receiver] = await Promise.all([listeningGateway(), startWebhookReceiver()]);
});
afterAll(async () => {
  await Promise.all([g?.close(), receiver?.close()]);
});

describe('webhooks through the SDK', () => {
  it('a delivery verifies with webhooks.secret(); after rotateSecret() the new secret verifies the next one', async () => {
    const client = new Mediagate({ baseUrl: g.origin, apiKey: g.key });
    const { key } = await client.webhooks.secret();
    expect(key).toMatch(/^whsec_/);
    const task = await client.pic.create({ model: 'pic', prompt: 'hooked', callback_url: `${receiver.origin}/hook` });
    const delivery = await waitFor(() => receiver.received.find((r) => r.body.toString().includes(task.id)), 15_000, 'the delivery');
    const body = await client.webhooks.verify<{ id: string; status: string }>(delivery.body, delivery.headers as Record<string, string>, key);
    expect(body).toMatchObject({ id: task.id, status: 'completed' });
    await expect(client.webhooks.verify(`${delivery.body.toString()} `, delivery.headers as Record<string, string>, key)).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
    const deliveries = await waitFor(
      async () => {
        const list = await client.tasks.deliveries(task.id);
        return list.data[0]?.status === 'delivered' ? list : undefined;
      },
      15_000,
      'the delivery to be recorded',
    );
    expect(deliveries.data[0]).toMatchObject({ url: `${receiver.origin}/hook`, status: 'delivered' });

    const rotated = await client.webhooks.rotateSecret();
    expect(rotated.key).not.toBe(key);
    const next = await client.pic.create({ model: 'pic', prompt: 'hooked again', callback_url: `${receiver.origin}/hook` });
    const second = await waitFor(() => receiver.received.find((r) => r.body.toString().includes(next.id)), 15_000, 'the second delivery');
    await expect(client.webhooks.verify(second.body, second.headers as Record<string, string>, rotated.key)).resolves.toMatchObject({ id: next.id });
  });
});
