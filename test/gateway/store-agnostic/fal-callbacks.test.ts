/**
 * fal's webhooks in a gateway that takes provider callbacks (G157, G158, G160), against
 * the fake queue. `fal` is checked every hour (pollSeconds 3600), so a task of it that completes
 * within the test completed because its webhook brought the check forward; `polled` is checked
 * every 50 ms and its webhooks go missing or are signed with a key fal does not publish: polling
 * completes its tasks anyway. Forged, tampered, stale, replayed deliveries and deliveries about
 * another request, an unknown or a finished task change nothing; the key set is fetched again when
 * a delivery matches none of its keys, at most every 30 s, whoever sends deliveries.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { falCallbacks } from '../../../src/providers/fal/callbacks.js';
import { FalHttp } from '../../../src/providers/fal/http.js';
import { FAL_MODELS } from '../../helpers/fal-mapping.js';
import { startFakeFal, type FakeFal } from '../../fakes/fal.js';
import { configFiles } from '../../helpers/config-files.js';
import { submitPic } from '../../helpers/gateway-calls.js';
import { waitFor } from '../../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { NOT_BEFORE_MS, postCallback, waitingTask } from '../../helpers/provider-callbacks.js';

const { file } = configFiles('mediagate-fal-callbacks-');
let fal: FakeFal;
let polled: FakeFal;
let gw: ListeningGateway;

beforeAll(async () => {
  [fal, polled] = await Promise.all([startFakeFal(), startFakeFal()]);
  const providers = file({
    providers: {
      fal: { type: 'fal', baseUrl: fal.baseUrl, apiKeyEnv: 'FAL_KEY', pollSeconds: 3600, models: FAL_MODELS, jwksUrl: fal.jwksUrl },
      polled: { type: 'fal', baseUrl: polled.baseUrl, apiKeyEnv: 'POLLED_KEY', pollSeconds: 0.05, models: FAL_MODELS, jwksUrl: polled.jwksUrl },
    },
    routes: { 'pic-2': [{ provider: 'fal', model: 'fal-ai/flux/dev' }], pic: [{ provider: 'polled', model: 'fal-ai/flux/dev' }] },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, FAL_KEY: fal.apiKey, POLLED_KEY: polled.apiKey, MEDIAGATE_PROVIDER_CALLBACKS: '1' } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([fal?.close(), polled?.close()]);
});

const submit = (model: string, prompt: string): Promise<string> => submitPic(gw, model, prompt);
const submitOf = (fake: FakeFal, prompt: string) => {
  const made = fake.submits.filter((s) => s.input.prompt === prompt);
  expect(made).toHaveLength(1);
  return made[0]!;
};
/** The status looks the queue answered about a request: the gateway's checks. */
const looksAt = (fake: FakeFal, requestId: string) => fake.calls.filter((c) => c === `status ${requestId}`).length;

describe('fal webhooks bring the check forward', () => {
  let doneId = '';

  it('a submit names the callback URL as fal_webhook; the delivery completes the task, whose check was an hour away', async () => {
    const id = await submit('pic-2', 'a lighthouse at dusk');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = submitOf(fal, 'a lighthouse at dusk');
    expect(made.webhook).toBe(`${gw.origin}/v1/provider-callbacks/fal/${id}`);
    await fal.webhooks.settled();
    const deliveries = fal.webhooks.deliveries.filter((d) => d.requestId === made.requestId);
    expect(deliveries.map((d) => d.status)).toEqual([200]);
    expect(JSON.parse(deliveries[0]!.answer)).toEqual({ received: true, outcome: expect.stringMatching(/^(check_sooner|after_current_work)$/) });
    expect(looksAt(fal, made.requestId)).toBe(1);
    expect(fal.calls).toContain(`result ${made.requestId}`);
    expect(task.result?.files[0]).toMatchObject({ contentType: 'image/png', width: 1024, height: 1024 });
    doneId = id;
  });

  it('forged, tampered, stale, unsigned and misaddressed deliveries change nothing; the genuine one brings one check; its replay none', async () => {
    const id = await submit('pic-2', 'the tide [hold]');
    const waiting = await waitingTask(gw, id);
    const requestId = waiting.upstream.ref.id;
    expect(waiting.runAfter - Date.now()).toBeGreaterThan(NOT_BEFORE_MS - 60_000);
    const body = JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: { images: [] } });
    const unchanged = async () => {
      expect(await gw.store.tasks.get(id)).toMatchObject({ status: 'processing', runAfter: waiting.runAfter, leaseOwner: null });
      expect(looksAt(fal, requestId)).toBe(0);
    };

    const forged = await postCallback(gw, 'fal', id, fal.webhooks.sign(requestId, body, { key: generateKeyPairSync('ed25519').privateKey }), body);
    expect(forged.status).toBe(401);
    expect(forged.json.error).toMatchObject({ code: 'invalid_callback_signature', param: 'x-fal-webhook-signature' });
    await unchanged();
    expect((await postCallback(gw, 'fal', id, fal.webhooks.sign(requestId, body), body.replace('"OK"', '"ERROR"'))).status).toBe(401);
    await unchanged();
    const stale = await postCallback(gw, 'fal', id, fal.webhooks.sign(requestId, body, { timestamp: Math.floor(Date.now() / 1000) - 400 }), body);
    expect(stale.status).toBe(401);
    expect(stale.json.error?.message).toMatch(/^x-fal-webhook-timestamp \d+ is 4\d\d s before this gateway's clock/);
    await unchanged();
    const { 'x-fal-webhook-signature': _sig, ...unsigned } = fal.webhooks.sign(requestId, body);
    const missing = await postCallback(gw, 'fal', id, unsigned, body);
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: 'invalid_request', param: 'x-fal-webhook-signature' });
    await unchanged();
    expect((await postCallback(gw, 'fal', id, fal.webhooks.sign('another-request', body), body)).json).toEqual({ received: true, outcome: 'not_waiting' });
    expect((await postCallback(gw, 'fal', 'task_AAAAAAAAnotatask0000000000', fal.webhooks.sign(requestId, body), body)).json).toEqual({
      received: true,
      outcome: 'not_waiting',
    });
    // signed with the other provider's keys, about this task (its generation is not that provider's)
    expect((await postCallback(gw, 'polled', id, polled.webhooks.sign(requestId, body), body)).json).toEqual({ received: true, outcome: 'not_waiting' });
    await unchanged();

    const genuine = fal.webhooks.sign(requestId, body);
    expect(await postCallback(gw, 'fal', id, genuine, body)).toEqual({ status: 200, json: { received: true, outcome: 'check_sooner' } });
    // the check it brought: the request is still in progress there, so the next check is an hour away again
    const checked = await waitFor(
      async () => {
        const t = (await gw.store.tasks.get(id))!;
        return looksAt(fal, requestId) === 1 && t.leaseOwner === null && t.runAfter > Date.now() ? t : undefined;
      },
      15_000,
      'the check the delivery brought forward',
    );
    expect(checked.status).toBe('processing');
    expect(checked.runAfter - Date.now()).toBeGreaterThan(NOT_BEFORE_MS - 60_000);

    expect(await postCallback(gw, 'fal', id, genuine, body)).toEqual({ status: 200, json: { received: true, outcome: 'duplicate' } });
    expect(await gw.store.tasks.get(id)).toMatchObject({ status: 'processing', runAfter: checked.runAfter });
    expect(looksAt(fal, requestId)).toBe(1);
  });

  it('a genuine delivery about a finished task changes nothing', async () => {
    const before = (await gw.store.tasks.get(doneId))!;
    const made = submitOf(fal, 'a lighthouse at dusk');
    const body = JSON.stringify({ request_id: made.requestId, status: 'OK', payload: {} });
    expect((await postCallback(gw, 'fal', doneId, fal.webhooks.sign(made.requestId, body), body)).json).toEqual({ received: true, outcome: 'not_waiting' });
    expect(await gw.store.tasks.get(doneId)).toEqual(before);
  });

  it('deliveries no key matches fetch the key set again at most once per 30 s, however many come', async () => {
    const before = fal.webhooks.jwksFetches;
    const body = JSON.stringify({ request_id: 'r', status: 'OK', payload: {} });
    const stranger = generateKeyPairSync('ed25519').privateKey;
    for (let i = 0; i < 20; i++) {
      const answer = await postCallback(gw, 'fal', doneId, fal.webhooks.sign('r', body, { key: stranger, timestamp: Math.floor(Date.now() / 1000) - i }), body);
      expect(answer.status).toBe(401);
    }
    expect(fal.webhooks.jwksFetches - before).toBeLessThanOrEqual(1);
  });
});

describe("fal's key set", () => {
  it('is fetched when first needed, kept, and fetched again for a key it lacks (rotated) once 30 s have passed since the last fetch', async () => {
    const fake = await startFakeFal();
    const http = new FalHttp({ id: 'k', who: 'the fal upstream "k"', baseUrl: new URL(fake.baseUrl), connectTimeoutMs: 5000 });
    let clock = 0;
    const callbacks = falCallbacks({ id: 'k', who: 'the fal upstream "k"', http, jwksUrl: new URL(fake.jwksUrl), now: () => clock });
    const body = Buffer.from('{"status":"OK"}');
    const deliver = () => callbacks.verify({ headers: fake.webhooks.sign('r-1', body.toString()), body }, Date.now());
    try {
      expect(await deliver()).toEqual({ valid: true, upstreamId: 'r-1', deliveryId: expect.stringMatching(/^[0-9a-f]{128}$/) });
      expect(await deliver()).toMatchObject({ valid: true });
      expect(fake.webhooks.jwksFetches).toBe(1);
      fake.webhooks.rotateKey();
      clock = 29_999;
      expect(await deliver()).toMatchObject({ valid: false, kind: 'forged' });
      expect(fake.webhooks.jwksFetches).toBe(1);
      clock = 30_000;
      expect(await deliver()).toMatchObject({ valid: true });
      expect(fake.webhooks.jwksFetches).toBe(2);
    } finally {
      await http.close();
      await fake.close();
    }
  });
});

describe('polling stays the fallback', () => {
  it('a webhook that never comes: the task completes by its checks', async () => {
    polled.webhooks.mode = 'drop';
    const id = await submit('pic', 'no news from upstream');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = submitOf(polled, 'no news from upstream');
    expect(made.webhook).toBe(`${gw.origin}/v1/provider-callbacks/polled/${id}`);
    expect(polled.webhooks.deliveries.filter((d) => d.requestId === made.requestId)).toEqual([]);
    expect(looksAt(polled, made.requestId)).toBeGreaterThan(0);
  });

  it('a webhook signed with a key fal does not publish: refused, and the task completes by its checks', async () => {
    polled.webhooks.mode = 'unpublished-key';
    const id = await submit('pic', 'a garbled notice');
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const made = submitOf(polled, 'a garbled notice');
    const [delivery] = await waitFor(
      () => {
        const d = polled.webhooks.deliveries.filter((x) => x.requestId === made.requestId);
        return d.length > 0 ? d : undefined;
      },
      10_000,
      'the delivery',
    );
    expect(delivery!.status).toBe(401);
  });
});
