/**
 * Caller webhooks end to end (G208-G215): a local receiver gets the task's query reply, signed the
 * Standard Webhooks way (checked with the independent `standardwebhooks` package), retried after
 * errors and timeouts with the same webhook-id and bytes, never redirected, never sent to a
 * private address in production mode; the deliveries endpoint; secret rotation; callback_url rules.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { mediaRefs } from '../../src/contract/media-refs.js';
import { createHarness, type Harness, type HarnessOptions } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../helpers/scripted-receiver.js';
import { insertTasks } from '../helpers/task-rows.js';

let h: Harness | undefined;
let receiver: ScriptedReceiver | undefined;
afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

/** Small retry settings: waits of 50-100 ms, attempts bounded at 500 ms. */
const FAST = { firstRetryMs: 50, maxRetryMs: 100, timeoutMs: 500 };

async function setUp(options: HarnessOptions = {}): Promise<Harness> {
  h = await createHarness({ webhooks: { settings: FAST }, ...options });
  return h;
}

const json = (res: { body: string }) => JSON.parse(res.body);

async function submitPic(extra: Record<string, unknown>, key?: string, headers: Record<string, string> = {}) {
  const res = await h!.app.inject({
    method: 'POST',
    url: '/v1/pic/images',
    headers: { ...h!.auth(key), 'content-type': 'application/json', ...headers },
    payload: { model: 'pic', prompt: 'a red fox', ...extra },
  });
  return res;
}

async function deliveries(id: string, key?: string) {
  return h!.app.inject({ method: 'GET', url: `/v1/tasks/${id}/deliveries`, headers: h!.auth(key) });
}

async function finalDelivery(id: string) {
  return waitFor(
    async () => {
      const [d] = json(await deliveries(id)).data;
      return d && d.status !== 'pending' ? d : undefined;
    },
    10_000,
    `the delivery of ${id} to finish`,
  );
}

describe('webhooks: delivery', () => {
  it('POSTs the query reply, signed (verified by standardwebhooks); the deliveries endpoint shows it; another key gets a 404', async () => {
    await setUp();
    receiver = await startScriptedReceiver();
    const secretRes = await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth() });
    expect(secretRes.statusCode).toBe(200);
    const { key: secret } = json(secretRes);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(json(await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth() })).key).toBe(secret); // kept

    const res = await submitPic({ callback_url: `${receiver.origin}/hook?x=1` });
    expect(res.statusCode, res.body).toBe(200);
    const id = json(res).id;
    const d = await finalDelivery(id);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    const query = json(await h!.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h!.auth() }));
    expect(verified).toEqual(query);
    expect(query.status).toBe('completed');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/^mediagate-webhooks\//);
    expect(got.headers['webhook-id']).toBe(`msg_${id}`);
    // a body signed with another secret is refused by the verifier (the check can fail)
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got.body, got.headers as Record<string, string>)).toThrow();

    expect(d).toEqual({
      id: `msg_${id}`,
      url: `${receiver.origin}/hook?x=1`,
      status: 'delivered',
      next_attempt_at: null,
      attempts: [{ at: expect.any(Number), status_code: 200, error: null, duration_ms: expect.any(Number) }],
    });
    const other = await deliveries(id, h!.otherKey);
    expect(other.statusCode).toBe(404);
    expect((await deliveries('task_nope')).statusCode).toBe(404);
    expect((await deliveries('task_%00')).statusCode).toBe(404); // an id PostgreSQL cannot even compare
    // a task with no URL has no deliveries
    const quiet = json(await submitPic({})).id;
    await h!.waitForTask(quiet);
    expect(json(await deliveries(quiet))).toEqual({ object: 'list', data: [] });
  });

  it("a delivery nothing can sign (its task's key is gone) is given up at its first attempt, never sent", async () => {
    await setUp();
    receiver = await startScriptedReceiver();
    const [task] = await insertTasks(h!.store.tasks, [
      {
        id: 'task_of_a_key_that_is_gone',
        ownerKeyId: 'key_gone',
        family: 'pic',
        form: null,
        model: 'pic',
        provider: 'sandbox',
        request: { params: { prompt: 'orphan' }, output: { kind: 'image', width: 64, height: 64, format: 'png' }, media: mediaRefs() },
        amount: 1,
        createdAt: Date.now(),
        callbackUrl: `${receiver.origin}/hook`,
      },
    ]);
    h!.runner!.wake();
    const delivery = await waitFor(
      async () => {
        const [d] = await h!.store.webhooks.listForTask(task!.id);
        return d && d.status !== 'pending' ? d : undefined;
      },
      10_000,
      'the delivery to end',
    );
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/API key key_gone .* no longer exists/) });
    expect(receiver.received).toHaveLength(0);
  });

  it('retries after a 500 and a timeout with the same webhook-id and the same bytes; a later 2xx delivers', async () => {
    await setUp();
    receiver = await startScriptedReceiver([500, 'hang', 204]);
    const id = json(await submitPic({ callback_url: receiver.origin })).id;
    const d = await finalDelivery(id);
    expect(d.status).toBe('delivered');
    expect(d.attempts.map((a: { status_code: number | null }) => a.status_code)).toEqual([500, null, 204]);
    expect(d.attempts[0].error).toMatch(/^HTTP 500: receiver says 500/);
    expect(d.attempts[0].error.length).toBeLessThan(600); // an excerpt, not the whole answer
    expect(d.attempts[1].error).toMatch(/no answer within 0.5 s/);
    expect(receiver.received).toHaveLength(3);
    const [a, b, c] = receiver.received;
    expect(new Set([a, b, c].map((r) => r!.headers['webhook-id']))).toEqual(new Set([`msg_${id}`]));
    expect(b!.body).toBe(a!.body);
    expect(c!.body).toBe(a!.body);
    const { key } = json(await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth() }));
    for (const r of [a, b, c]) expect(new Webhook(key).verify(r!.body, r!.headers as Record<string, string>)).toBeTruthy();
  });

  it('a redirect is not followed (a failed attempt); past the retry period the delivery fails for good', async () => {
    await setUp({ webhooks: { settings: { ...FAST, retryForMs: 0 } } });
    const elsewhere = await startScriptedReceiver();
    try {
      receiver = await startScriptedReceiver([{ status: 307, headers: { location: `${elsewhere.origin}/stolen` } }]);
      const id = json(await submitPic({ callback_url: receiver.origin })).id;
      const d = await finalDelivery(id);
      expect(d).toMatchObject({ status: 'failed', next_attempt_at: null });
      expect(d.attempts).toEqual([
        { at: expect.any(Number), status_code: 307, error: 'HTTP 307 (redirects are not followed)', duration_ms: expect.any(Number) },
      ]);
      expect(elsewhere.received).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('rotation: a new secret; for 24 h deliveries carry a second signature with the previous one', async () => {
    await setUp();
    receiver = await startScriptedReceiver();
    const old = json(await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth() })).key;
    const rotated = await h!.app.inject({ method: 'POST', url: '/v1/webhooks/secret/rotate', headers: h!.auth() });
    expect(rotated.statusCode).toBe(200);
    const fresh = json(rotated).key;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect(json(await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth() })).key).toBe(fresh);
    // bob's secret is his own
    expect(json(await h!.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h!.auth(h!.otherKey) })).key).not.toBe(fresh);
    const id = json(await submitPic({ callback_url: receiver.origin })).id;
    await finalDelivery(id);
    const got = receiver.received[0]!;
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(fresh).verify(got.body, got.headers as Record<string, string>)).toBeTruthy();
    expect(new Webhook(old).verify(got.body, got.headers as Record<string, string>)).toBeTruthy();
  });
});

describe('webhooks: callback_url and the key default', () => {
  it('malformed or not http(s): a 400 naming callback_url, in the family error body (pic, videos, Model Center)', async () => {
    await setUp();
    // a control character (NUL included: PostgreSQL text cannot hold it) is refused, never stored
    for (const value of ['not a url', 'ftp://example.com/x', 42, 'https://user:pw@example.com/', 'https://example.com/a\u0000b', 'https://example.com/\n']) {
      const res = await submitPic({ callback_url: value });
      expect(res.statusCode, String(value)).toBe(400);
      expect(json(res).error).toMatchObject({ param: 'callback_url', type: 'invalid_request_error' });
      expect(json(res).error.message).toMatch(/^callback_url: /);
    }
    const videos = await h!.app.inject({
      method: 'POST',
      url: '/v1/videos/videos',
      headers: { ...h!.auth(), 'content-type': 'application/json' },
      payload: { model: 'videos', prompt: 'a fox', duration: 5, callback_url: 'ftp://x' },
    });
    expect(videos.statusCode).toBe(400);
    expect(videos.body).toContain('callback_url');
    const mc = await h!.app.inject({
      method: 'POST',
      url: '/v2/model-center/tasks',
      headers: { ...h!.auth(), 'content-type': 'application/json' },
      payload: { model: 'imagegen-5.0', prompt: 'x', callback_url: 7 },
    });
    expect(mc.statusCode).toBe(400);
    expect(json(mc).error).toMatchObject({ param: 'callback_url' });
  });

  it('every create call takes callback_url: pic, clip and reel in both forms, motion, videos, Model Center', async () => {
    await setUp({ workers: false });
    const creates: Array<[string, Record<string, unknown>]> = [
      ['/v1/pic/images', { model: 'pic', prompt: 'x' }],
      ['/clip/videos', { prompt: 'x' }], // Form A
      ['/clip/videos', { model: 'clip_3_1_fast', prompt: 'x' }], // Form B
      ['/reel/videos', { model: 'reel-2', prompt: 'x' }], // Form A
      ['/reel/videos', { model: 'reelOa2Plus', prompt: 'x', duration: 4 }], // Form B
      ['/v1/motion/videos', { model: 'motion_2_0_fast', content: [{ type: 'text', text: 'x' }] }],
      ['/v1/videos/videos', { model: 'videos', prompt: 'x', duration: 5 }],
      ['/v2/model-center/tasks', { model: 'imagegen-5.0', prompt: 'x' }],
    ];
    for (const [url, payload] of creates) {
      const hook = `https://hooks.example.com${url}/${String(payload.model)}`;
      const res = await h!.app.inject({
        method: 'POST',
        url,
        headers: { ...h!.auth(), 'content-type': 'application/json' },
        payload: { ...payload, callback_url: hook },
      });
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      const reply = json(res);
      const task = (await h!.store.tasks.get(reply.id ?? reply.data?.projectId ?? reply.data?.id))!;
      expect(task.callbackUrl, url).toBe(hook);
      expect(task.request.params, url).not.toHaveProperty('callback_url');
    }
  });

  it('Model Center: callback_url is kept with the task and never passed on to the provider', async () => {
    await setUp();
    const res = await h!.app.inject({
      method: 'POST',
      url: '/v2/model-center/tasks',
      headers: { ...h!.auth(), 'content-type': 'application/json' },
      payload: { model: 'imagegen-5.0', prompt: 'x', extra: 1, callback_url: 'https://hooks.example.com/mc' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const task = (await h!.store.tasks.get(json(res).id))!;
    expect(task.callbackUrl).toBe('https://hooks.example.com/mc');
    expect(task.request.params).toMatchObject({ extra: 1 });
    expect(task.request.params).not.toHaveProperty('callback_url');
  });

  it('the key default applies when the request names none; null opts out; an idempotent replay is the same task, one delivery', async () => {
    await setUp();
    receiver = await startScriptedReceiver();
    const alice = (await h!.store.keys.list()).find((k) => k.name === 'alice')!;
    await h!.store.keys.setWebhookUrl(alice.id, `${receiver.origin}/default`);
    const byDefault = json(await submitPic({})).id;
    const optedOut = json(await submitPic({ callback_url: null })).id;
    const first = await submitPic({ callback_url: `${receiver.origin}/own` }, undefined, { 'idempotency-key': 'k1' });
    const replay = await submitPic({ callback_url: `${receiver.origin}/own` }, undefined, { 'idempotency-key': 'k1' });
    expect(json(replay).id).toBe(json(first).id);
    expect((await h!.store.tasks.get(byDefault))?.callbackUrl).toBe(`${receiver.origin}/default`);
    expect((await h!.store.tasks.get(optedOut))?.callbackUrl).toBeNull();
    await finalDelivery(byDefault);
    await finalDelivery(json(first).id);
    await h!.waitForTask(optedOut);
    expect(json(await deliveries(optedOut)).data).toEqual([]);
    expect(json(await deliveries(json(first).id)).data).toHaveLength(1);
    expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).toEqual([`msg_${byDefault}`, `msg_${json(first).id}`].sort());
  });
});

describe('webhooks: the OpenAPI document', () => {
  it('describes callback_url on the create bodies and the replies of the webhook endpoints', async () => {
    await setUp();
    const doc = json(await h!.app.inject({ method: 'GET', url: '/openapi.json' }));
    for (const path of ['/v1/pic/images', '/v1/videos/videos', '/v2/model-center/tasks']) {
      expect(doc.paths[path].post.requestBody.content['application/json'].schema.properties.callback_url.description, path).toMatch(/POSTed, signed/);
    }
    const list = doc.paths['/v1/tasks/{id}/deliveries'].get.responses['200'].content['application/json'].schema;
    expect(list.properties.data.items.properties.attempts.items.required).toEqual(['at', 'status_code', 'error', 'duration_ms']);
    expect(doc.paths['/v1/webhooks/secret/rotate'].post.responses['200'].content['application/json'].schema.properties.key.type).toBe('string');
  });
});

describe('webhooks: private addresses in production mode (MEDIAGATE_ALLOW_PRIVATE_URLS=0)', () => {
  it('a loopback literal is a 400 at submit; a name resolving to loopback is refused at delivery, given up at once, never reached (G275)', async () => {
    await setUp({ env: { MEDIAGATE_ALLOW_PRIVATE_URLS: '0' } });
    receiver = await startScriptedReceiver();
    for (const url of [receiver.origin, `http://[::1]:${receiver.port}/`, 'http://10.0.0.1/', 'http://169.254.169.254/latest']) {
      const res = await submitPic({ callback_url: url });
      expect(res.statusCode, url).toBe(400);
      expect(json(res).error).toMatchObject({ param: 'callback_url', code: 'url_not_allowed' });
    }
    const res = await submitPic({ callback_url: `http://localhost:${receiver.port}/` });
    expect(res.statusCode, res.body).toBe(200);
    const id = json(res).id;
    // refused again at every retry: given up at once, saying why and nothing of what the name resolves to
    const d = await finalDelivery(id);
    expect(d).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ status_code: null, error: 'address not allowed' });
    expect(receiver.received).toEqual([]);
  });
});
