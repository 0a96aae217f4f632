/**
 * Replicate's webhooks in a gateway that takes provider callbacks (G157-G159), against
 * the fake predictions API. `rep` is checked every hour (pollSeconds 3600), so a task of it that
 * completes within the test completed because its webhook brought the check forward; `polled` is
 * checked every 50 ms and its webhooks go missing or carry another secret's signature: polling
 * completes its tasks anyway. Forged, tampered, stale, replayed deliveries and deliveries about
 * another prediction, an unknown or a finished task change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeReplicate, type FakeReplicate } from '../../fakes/replicate.js';
import { configFiles } from '../../helpers/config-files.js';
import { submitPic } from '../../helpers/gateway-calls.js';
import { waitFor } from '../../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { NOT_BEFORE_MS, postCallback, waitingTask } from '../../helpers/provider-callbacks.js';
import { REPLICATE_MODELS } from '../../helpers/replicate-models.js';

const { file } = configFiles('mediagate-replicate-callbacks-');
let rep: FakeReplicate;
let polled: FakeReplicate;
let gw: ListeningGateway;

beforeAll(async () => {
  [rep, polled] = await Promise.all([startFakeReplicate(), startFakeReplicate()]);
  const providers = file({
    providers: {
      rep: { type: 'replicate', baseUrl: rep.baseUrl, apiKeyEnv: 'REP_KEY', pollSeconds: 3600, models: REPLICATE_MODELS },
      polled: { type: 'replicate', baseUrl: polled.baseUrl, apiKeyEnv: 'POLLED_KEY', pollSeconds: 0.05, models: REPLICATE_MODELS },
    },
    routes: { 'pic-2': [{ provider: 'rep', model: 'flux-schnell' }], pic: [{ provider: 'polled', model: 'flux-schnell' }] },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, REP_KEY: rep.apiKey, POLLED_KEY: polled.apiKey, MEDIAGATE_PROVIDER_CALLBACKS: '1' } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([rep?.close(), polled?.close()]);
});

const submit = (model: string, prompt: string): Promise<string> => submitPic(gw, model, prompt);
const predictionOf = (fake: FakeReplicate, prompt: string) => {
  const made = fake.creates.filter((c) => c.input.prompt === prompt);
  expect(made).toHaveLength(1);
  return made[0]!;
};
/** The looks (GETs) the upstream answered about a prediction: the gateway's checks. */
const looksAt = (fake: FakeReplicate, predictionId: string) =>
  fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/predictions/${predictionId}`).length;

describe('replicate webhooks bring the check forward', () => {
  let doneId = '';

  it('a create asks for the completed webhook at the callback URL; the delivery completes the task, whose check was an hour away', async () => {
    const id = await submit('pic-2', 'a lighthouse at dusk');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = predictionOf(rep, 'a lighthouse at dusk');
    expect(made.webhook).toEqual({ url: `${gw.origin}/v1/provider-callbacks/rep/${id}`, events: ['completed'] });
    await rep.webhooks.settled();
    const deliveries = rep.webhooks.deliveries.filter((d) => d.predictionId === made.id);
    expect(deliveries.map((d) => [d.event, d.status])).toEqual([['completed', 200]]);
    expect(JSON.parse(deliveries[0]!.answer)).toEqual({ received: true, outcome: expect.stringMatching(/^(check_sooner|after_current_work)$/) });
    // the one check there was: the one the delivery brought forward
    expect(looksAt(rep, made.id)).toBe(1);
    expect(task.result?.files[0]).toMatchObject({ contentType: 'image/png', width: 1024, height: 1024 });
    doneId = id;
  });

  it('forged, tampered, stale, unsigned and misaddressed deliveries change nothing; the genuine one brings one check; its replay none', async () => {
    const id = await submit('pic-2', '[forever] the tide');
    const waiting = await waitingTask(gw, id);
    const predictionId = waiting.upstream.ref.id;
    expect(waiting.runAfter - Date.now()).toBeGreaterThan(NOT_BEFORE_MS - 60_000);
    const body = JSON.stringify({ id: predictionId, status: 'succeeded', output: ['https://replicate.delivery/x.png'] });
    const unchanged = async () => {
      expect(await gw.store.tasks.get(id)).toMatchObject({ status: 'processing', runAfter: waiting.runAfter, leaseOwner: null });
      expect(looksAt(rep, predictionId)).toBe(0);
    };

    const forged = await postCallback(gw, 'rep', id, rep.webhooks.sign(body, { secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }), body);
    expect(forged.status).toBe(401);
    expect(forged.json.error).toMatchObject({ code: 'invalid_callback_signature', param: 'webhook-signature' });
    await unchanged();
    const tampered = await postCallback(gw, 'rep', id, rep.webhooks.sign(body), body.replace('succeeded', 'failed'));
    expect(tampered.status).toBe(401);
    await unchanged();
    const stale = await postCallback(gw, 'rep', id, rep.webhooks.sign(body, { timestamp: Math.floor(Date.now() / 1000) - 400 }), body);
    expect(stale.status).toBe(401);
    expect(stale.json.error?.message).toMatch(/^webhook-timestamp \d+ is 4\d\d s before this gateway's clock/);
    await unchanged();
    const { 'webhook-signature': _sig, ...unsigned } = rep.webhooks.sign(body);
    const missing = await postCallback(gw, 'rep', id, unsigned, body);
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: 'invalid_request', param: 'webhook-signature' });
    await unchanged();
    const other = JSON.stringify({ id: 'another-prediction', status: 'succeeded' });
    expect((await postCallback(gw, 'rep', id, rep.webhooks.sign(other), other)).json).toEqual({ received: true, outcome: 'not_waiting' });
    expect((await postCallback(gw, 'rep', 'task_AAAAAAAAnotatask0000000000', rep.webhooks.sign(body), body)).json).toEqual({
      received: true,
      outcome: 'not_waiting',
    });
    // signed by another provider's upstream (another account's secret) for this task
    const elsewhere = await postCallback(gw, 'polled', id, polled.webhooks.sign(body), body);
    expect(elsewhere.json).toEqual({ received: true, outcome: 'not_waiting' });
    await unchanged();

    const genuine = rep.webhooks.sign(body);
    expect(await postCallback(gw, 'rep', id, genuine, body)).toEqual({ status: 200, json: { received: true, outcome: 'check_sooner' } });
    // the check it brought: the prediction still runs there, so the next check is an hour away again
    const checked = await waitFor(
      async () => {
        const t = (await gw.store.tasks.get(id))!;
        return looksAt(rep, predictionId) === 1 && t.leaseOwner === null && t.runAfter > Date.now() ? t : undefined;
      },
      15_000,
      'the check the delivery brought forward',
    );
    expect(checked.status).toBe('processing');
    expect(checked.runAfter - Date.now()).toBeGreaterThan(NOT_BEFORE_MS - 60_000);

    expect(await postCallback(gw, 'rep', id, genuine, body)).toEqual({ status: 200, json: { received: true, outcome: 'duplicate' } });
    expect(await gw.store.tasks.get(id)).toMatchObject({ status: 'processing', runAfter: checked.runAfter });
    expect(looksAt(rep, predictionId)).toBe(1);
  });

  it('a genuine delivery about a finished task changes nothing', async () => {
    const before = (await gw.store.tasks.get(doneId))!;
    const made = predictionOf(rep, 'a lighthouse at dusk');
    const body = JSON.stringify({ id: made.id, status: 'succeeded' });
    expect((await postCallback(gw, 'rep', doneId, rep.webhooks.sign(body), body)).json).toEqual({ received: true, outcome: 'not_waiting' });
    expect(await gw.store.tasks.get(doneId)).toEqual(before);
    expect(looksAt(rep, made.id)).toBe(1);
  });
});

describe('polling stays the fallback', () => {
  it('a webhook that never comes: the task completes by its checks', async () => {
    polled.webhooks.mode = 'drop';
    const id = await submit('pic', 'no news from upstream');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = predictionOf(polled, 'no news from upstream');
    expect(made.webhook?.url).toBe(`${gw.origin}/v1/provider-callbacks/polled/${id}`);
    expect(polled.webhooks.deliveries.filter((d) => d.predictionId === made.id)).toEqual([]);
    expect(looksAt(polled, made.id)).toBeGreaterThan(0);
  });

  it('a webhook the gateway refuses (signed with another secret): the task completes by its checks', async () => {
    polled.webhooks.mode = 'wrong-secret';
    const id = await submit('pic', 'a garbled notice');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = predictionOf(polled, 'a garbled notice');
    const [delivery] = await waitFor(
      () => {
        const d = polled.webhooks.deliveries.filter((x) => x.predictionId === made.id);
        return d.length > 0 ? d : undefined;
      },
      10_000,
      'the delivery',
    );
    expect(delivery!.status).toBe(401);
  });
});
