/**
 * A webhook delivery whose lease lapsed mid-POST (G275): worker A claims it and POSTs, then freezes
 * past its lease before recording the outcome; worker B takes the delivery over and sends it again
 * with the same `webhook-id` and the same bytes. The receiver gets it twice (at-least-once: it
 * de-duplicates by `webhook-id`), and the delivery is recorded delivered once, by B: A's late
 * outcome is refused.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhooks/post.js';
import { signatureHeader, newWebhookSecret } from '../../src/webhooks/signing.js';
import { DeliveryWorker, recordDeliveryOutcome, USER_AGENT } from '../../src/webhooks/worker.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { body } from '../helpers/json.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../helpers/scripted-receiver.js';

const SETTINGS = { firstRetryMs: 50, maxRetryMs: 100, timeoutMs: 500 };
const log = pino({ level: 'silent' });

describe('a delivery whose lease lapsed mid-POST', () => {
  let h: Harness;
  let receiver: ScriptedReceiver;
  let b: DeliveryWorker | undefined;
  beforeAll(async () => {
    // the gateway's own delivery worker reads the outbox once at start, then not for an hour: A and B below do the work
    h = await createHarness({ webhooks: { pollMs: 3_600_000, settings: SETTINGS } });
    receiver = await startScriptedReceiver();
  });
  afterAll(async () => {
    await b?.stop();
    await h?.close();
    await receiver?.close();
  });

  it('is sent again with the same webhook-id and bytes, and recorded delivered once', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: h.auth(),
      payload: { model: 'pic', prompt: 'twice', callback_url: `${receiver.origin}/hook` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const taskId = body(res).id as string;
    await h.waitForTask(taskId);

    // worker A: claims with a lease that lapses at once (as when its process froze), and POSTs
    const [claimed] = await waitFor(
      async () => {
        const due = await h.store.webhooks.claimDue('worker-a', Date.now(), Date.now() + 100, 1);
        return due.length > 0 ? due : undefined;
      },
      10_000,
      'the delivery to be due',
    );
    const delivery = claimed!;
    const sent = (await h.store.webhooks.keepBody(delivery.id, 'worker-a', JSON.stringify({ id: taskId, status: 'completed' })))!;
    const secrets = (await h.store.webhooks.secrets(delivery.ownerKeyId, newWebhookSecret()))!;
    const at = Date.now();
    const first = await postWebhook(
      delivery.url,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': delivery.id,
        'webhook-timestamp': String(Math.floor(at / 1000)),
        'webhook-signature': signatureHeader(secrets, delivery.id, Math.floor(at / 1000), sent, at),
      },
      sent,
      { timeoutMs: 2000, allowPrivate: true },
    );
    expect(first.error).toBeNull();
    await new Promise((r) => setTimeout(r, 150)); // A is frozen past its lease

    // worker B takes the lapsed delivery over and delivers it again
    b = new DeliveryWorker({
      webhooks: h.store.webhooks,
      tasks: h.store.tasks,
      links: { resultUrl: () => null },
      log,
      settings: { ...h.config.webhooks, ...SETTINGS },
      allowPrivate: true,
      pollMs: 20,
    });
    b.start();
    const [done] = await waitFor(
      async () => {
        const list = await h.store.webhooks.listForTask(taskId);
        return list[0]?.status === 'delivered' ? list : undefined;
      },
      10_000,
      'B to deliver',
    );
    expect(done!.attempts).toHaveLength(1);

    // A wakes up: its outcome is not recorded (B holds the record)
    const late = await recordDeliveryOutcome(
      h.store.webhooks,
      delivery,
      'worker-a',
      { at, statusCode: 200, error: null, durationMs: 1 },
      { status: 'delivered' },
      log,
    );
    expect(late).toBe(false);
    const [final] = await h.store.webhooks.listForTask(taskId);
    expect(final).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(final!.attempts).toHaveLength(1);

    // the receiver got it twice: the same webhook-id, the same bytes (it de-duplicates by webhook-id)
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id]);
    expect(receiver.received.map((r) => r.body)).toEqual([sent, sent]);
  });
});
