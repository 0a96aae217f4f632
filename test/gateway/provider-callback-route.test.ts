/**
 * The provider callback route itself (G158): no bearer key; bad input is a 4xx, never a
 * 5xx; a body over 2 MiB is a 413 before anything is checked; at most 32 deliveries are read at
 * once (the next is a 429 before its body is read, and slots come back when connections end); a
 * gateway without MEDIAGATE_PROVIDER_CALLBACKS has no such route.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLBACK_BODY_LIMIT, CALLBACK_SLOTS } from '../../src/routes/provider-callbacks.js';
import { startFakeReplicate, type FakeReplicate } from '../fakes/replicate.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';

const { file } = configFiles('mediagate-callback-route-');
let rep: FakeReplicate;
let gw: ListeningGateway;

beforeAll(async () => {
  rep = await startFakeReplicate();
  const providers = file({
    providers: { rep: { type: 'replicate', baseUrl: rep.baseUrl, apiKeyEnv: 'REP_KEY', models: REPLICATE_MODELS } },
    routes: { 'pic-2': [{ provider: 'rep', model: 'flux-schnell' }] },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, REP_KEY: rep.apiKey, MEDIAGATE_PROVIDER_CALLBACKS: '1' } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await rep?.close();
});

const secretLooks = () => rep.requests.filter((r) => r.path === '/v1/webhooks/default/secret').length;

describe('POST /v1/provider-callbacks/{provider}/{task}', () => {
  it('bad input of every kind is a 4xx in the standard error body, never a 5xx', async () => {
    const signed = rep.webhooks.sign('{"id":"p"}');
    const cases: Array<{ url?: string; headers?: Record<string, string>; payload?: string | Buffer; status: number; code: string; param?: string }> = [
      { headers: {}, payload: '', status: 400, code: 'invalid_request', param: 'webhook-id' },
      { headers: { 'content-type': 'text/plain' }, payload: 'hello', status: 400, code: 'invalid_request', param: 'webhook-id' },
      {
        headers: { 'content-type': 'application/octet-stream', ...signed },
        payload: Buffer.from([0, 255, 1]),
        status: 401,
        code: 'invalid_callback_signature',
      },
      {
        headers: { 'content-type': 'application/json', ...signed, 'webhook-timestamp': '-1' },
        payload: '{}',
        status: 400,
        code: 'invalid_request',
        param: 'webhook-timestamp',
      },
      {
        headers: { 'content-type': 'application/json', ...signed, 'webhook-signature': `v1,${'A'.repeat(8000)}` },
        payload: '{}',
        status: 400,
        code: 'invalid_request',
        param: 'webhook-signature',
      },
      {
        headers: { 'content-type': 'application/json', ...signed, 'webhook-id': 'x'.repeat(300) },
        payload: '{}',
        status: 400,
        code: 'invalid_request',
        param: 'webhook-id',
      },
      {
        url: '/v1/provider-callbacks/nobody/task_x',
        headers: { 'content-type': 'application/json', ...signed },
        payload: '{}',
        status: 404,
        code: 'route_not_found',
        param: 'provider',
      },
      {
        url: '/v1/provider-callbacks/sandbox/task_x',
        headers: { 'content-type': 'application/json', ...signed },
        payload: '{}',
        status: 404,
        code: 'route_not_found',
      },
      { url: '/v1/provider-callbacks/-bad/task_x', headers: { 'content-type': 'application/json' }, payload: '{}', status: 400, code: 'invalid_request' },
    ];
    for (const c of cases) {
      const res = await gw.app.inject({ method: 'POST', url: c.url ?? '/v1/provider-callbacks/rep/task_x', headers: c.headers, payload: c.payload });
      expect(res.statusCode, `${c.url} ${JSON.stringify(c.headers)} -> ${res.body}`).toBe(c.status);
      expect(res.json().error, res.body).toMatchObject({ code: c.code, ...(c.param && { param: c.param }) });
    }
    // a signed body that is no prediction: refused naming it
    const junk = 'not json at all';
    const notPrediction = await gw.app.inject({
      method: 'POST',
      url: '/v1/provider-callbacks/rep/task_x',
      headers: { 'content-type': 'application/json', ...rep.webhooks.sign(junk) },
      payload: junk,
    });
    expect(notPrediction.statusCode).toBe(400);
    expect(notPrediction.json().error).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('a body larger than 2 MiB is a 413 before any signature is checked', async () => {
    const before = secretLooks();
    const big = `{"id":"p","logs":"${'x'.repeat(CALLBACK_BODY_LIMIT)}"}`;
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/provider-callbacks/rep/task_x',
      headers: { 'content-type': 'application/json', ...rep.webhooks.sign(big) },
      payload: big,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('body_too_large');
    expect(secretLooks()).toBe(before);
  });

  it(`at most ${CALLBACK_SLOTS} deliveries are read at once: the next is a 429 with Retry-After; slots come back when connections end`, async () => {
    const { port } = new URL(gw.origin);
    const slow = await Promise.all(
      Array.from(
        { length: CALLBACK_SLOTS },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const s = net.connect(Number(port), '127.0.0.1', () => {
              // headers, then a body that never comes
              s.write('POST /v1/provider-callbacks/rep/task_x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
              resolve(s);
            });
            s.on('error', reject);
          }),
      ),
    );
    try {
      const busy = await waitFor(
        async () => {
          const res = await fetch(`${gw.origin}/v1/provider-callbacks/rep/task_x`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          });
          return res.status === 429 ? res : undefined;
        },
        10_000,
        'the slots to be taken',
      );
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    } finally {
      for (const s of slow) s.destroy();
    }
    await waitFor(
      async () => {
        const res = await fetch(`${gw.origin}/v1/provider-callbacks/rep/task_x`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        return res.status === 400 ? true : undefined;
      },
      10_000,
      'the slots to come back',
    );
  });

  it('a gateway without MEDIAGATE_PROVIDER_CALLBACKS has no callback route', async () => {
    const h = await createHarness();
    try {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/provider-callbacks/sandbox/task_x',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('route_not_found');
    } finally {
      await h.close();
    }
  });
});
