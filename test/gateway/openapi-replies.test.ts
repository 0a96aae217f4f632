/**
 * The OpenAPI document tells the truth (G240-G244): one request per route, a success
 * and an error at least, driven through the gateway, and every reply body validated (Ajv, JSON
 * Schema 2020-12) against the schema the document declares for that route, status and media type.
 * A reply with an undocumented status, field or type fails here. Generic over the document: an
 * operation that no request below reaches fails the last test, naming it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { startFakeReplicate, type FakeReplicate } from '../fakes/replicate.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { image } from '../helpers/media-fixtures.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';

interface Response {
  description?: string;
  content?: Record<string, { schema: object }>;
}
type Doc = { paths: Record<string, Record<string, { responses: Record<string, Response> }>> };

const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { binary: true } });
const { file } = configFiles('mediagate-openapi-replies-');
/** Statuses each operation was seen to answer, and valid against its documented reply. */
const seen = new Map<string, Set<number>>();
const docs: Doc[] = [];
let idle: Harness; // no workers: tasks stay queued (cancel, create replies)
let busy: Harness; // the sandbox at instant timing: completed tasks, result files
let cb: ListeningGateway; // provider callbacks on (a fake Replicate signs)
let rep: FakeReplicate;

async function docOf(app: Harness['app']): Promise<Doc> {
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
  docs.push(doc);
  return doc;
}
let idleDoc: Doc;

beforeAll(async () => {
  idle = await createHarness({ workers: false, reviewMedia: false });
  busy = await createHarness({ reviewMedia: false });
  rep = await startFakeReplicate();
  const providers = file({
    providers: { rep: { type: 'replicate', baseUrl: rep.baseUrl, apiKeyEnv: 'REP_KEY', models: REPLICATE_MODELS } },
    routes: { 'pic-2': [{ provider: 'rep', model: 'flux-schnell' }] },
  });
  cb = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, REP_KEY: rep.apiKey, MEDIAGATE_PROVIDER_CALLBACKS: '1' } });
  idleDoc = await docOf(idle.app);
  await docOf(busy.app);
  await docOf(cb.app);
}, 60_000);
afterAll(async () => {
  await idle?.close();
  await busy?.close();
  await cb?.close();
  await rep?.close();
});

/** Checks `res` against the document's reply for `method` `path` (the document's own path, `{id}` and all). */
function check(doc: Doc, method: string, path: string, res: LightMyRequestResponse, expectStatus?: number): LightMyRequestResponse {
  const name = `${method} ${path}`;
  if (expectStatus !== undefined) expect(res.statusCode, `${name}: ${res.body.slice(0, 300)}`).toBe(expectStatus);
  const op = doc.paths[path]?.[method.toLowerCase()];
  expect(op, `${name} is not in the document`).toBeDefined();
  const documented = op!.responses[String(res.statusCode)];
  expect(documented, `${name} answered ${res.statusCode}, which the document does not list: ${res.body.slice(0, 300)}`).toBeDefined();
  // headers: every documented reply names x-request-id, which every reply carries; nothing undocumented of ours is sent
  const headers = (documented as { headers?: Record<string, unknown> }).headers ?? {};
  expect(Object.keys(headers), `${name} ${res.statusCode}: x-request-id undocumented`).toContain('x-request-id');
  expect(res.headers['x-request-id'], `${name} ${res.statusCode}: no x-request-id`).toBeTruthy();
  for (const ours of ['retry-after', 'idempotent-replayed']) {
    if (res.headers[ours] !== undefined) expect(Object.keys(headers), `${name} ${res.statusCode}: sent ${ours}, not documented`).toContain(ours);
  }
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  if (res.rawPayload.length === 0 || method === 'HEAD') {
    if (method !== 'HEAD') expect(documented!.content, `${name} ${res.statusCode}: documented with a body, answered none`).toBeUndefined();
  } else {
    const media = documented!.content?.[type] ?? documented!.content?.['*/*'];
    expect(media, `${name} ${res.statusCode}: ${type} is not a documented media type`).toBeDefined();
    if (type === 'application/json') {
      const validate = ajv.compile(media!.schema);
      const valid = validate(res.json());
      expect(valid, `${name} ${res.statusCode}: ${JSON.stringify(validate.errors)} in ${res.body.slice(0, 500)}`).toBe(true);
    }
  }
  if (!seen.has(name)) seen.set(name, new Set());
  seen.get(name)!.add(res.statusCode);
  return res;
}

const json = (h: Harness, method: 'POST' | 'GET' | 'DELETE', url: string, payload?: unknown, auth = true) =>
  h.app.inject({
    method,
    url,
    headers: { ...(auth && h.auth()), ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { payload: JSON.stringify(payload) }),
  });
const idOf = (res: LightMyRequestResponse): string => res.json().id as string;

describe('every reply matches the schema the document declares for it', () => {
  it("task families: create, query, cancel; success and errors in each family's error body", async () => {
    const d = idleDoc;
    const pic = check(d, 'POST', '/v1/pic/images', await json(idle, 'POST', '/v1/pic/images', { model: 'pic', prompt: 'a fox' }), 200);
    check(d, 'POST', '/v1/pic/images', await json(idle, 'POST', '/v1/pic/images', { model: 'nope', prompt: 'a fox' }), 400);
    check(d, 'POST', '/v1/pic/images', await json(idle, 'POST', '/v1/pic/images', { model: 'pic', prompt: 'a fox' }, false), 401);
    check(
      d,
      'POST',
      '/v1/pic/images',
      await idle.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: { ...idle.auth(), 'content-type': 'application/json' },
        payload: 'x'.repeat(2_000_000),
      }),
      413,
    );
    const key = { ...idle.auth(), 'content-type': 'application/json', 'idempotency-key': 'openapi-1' };
    check(
      d,
      'POST',
      '/v1/pic/images',
      await idle.app.inject({ method: 'POST', url: '/v1/pic/images', headers: key, payload: '{"model":"pic","prompt":"a"}' }),
      200,
    );
    const replayed = check(
      d,
      'POST',
      '/v1/pic/images',
      await idle.app.inject({ method: 'POST', url: '/v1/pic/images', headers: key, payload: '{"model":"pic","prompt":"a"}' }),
      200,
    );
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    check(
      d,
      'POST',
      '/v1/pic/images',
      await idle.app.inject({ method: 'POST', url: '/v1/pic/images', headers: key, payload: '{"model":"pic","prompt":"b"}' }),
      409,
    );

    const clip = check(d, 'POST', '/clip/videos', await json(idle, 'POST', '/clip/videos', { model: 'clip_3_1_fast', prompt: 'a boat' }), 200);
    check(d, 'POST', '/clip/videos', await json(idle, 'POST', '/clip/videos', { model: 'clip_3_1_fast' }), 400);
    const reel = check(d, 'POST', '/reel/videos', await json(idle, 'POST', '/reel/videos', { model: 'reel-2', prompt: 'a lighthouse' }), 200);
    check(d, 'POST', '/reel/videos', await json(idle, 'POST', '/reel/videos', { model: 'reel-9', prompt: 'a lighthouse' }), 400);
    check(d, 'POST', '/v1/reel/videos', await json(idle, 'POST', '/v1/reel/videos', { model: 'reelOa2', prompt: 'a lighthouse' }), 200);
    check(d, 'POST', '/v1/reel/videos', await json(idle, 'POST', '/v1/reel/videos', {}), 400);
    const motion = check(
      d,
      'POST',
      '/v1/motion/videos',
      await json(idle, 'POST', '/v1/motion/videos', { model: 'motion_2_0', content: [{ type: 'text', text: 'a fox runs' }] }),
      200,
    );
    check(d, 'POST', '/v1/motion/videos', await json(idle, 'POST', '/v1/motion/videos', { model: 'motion_2_0' }), 400);
    const videos = check(d, 'POST', '/v1/videos/videos', await json(idle, 'POST', '/v1/videos/videos', { model: 'videos', prompt: 'a fox', duration: 5 }), 200);
    check(d, 'POST', '/v1/videos/videos', await json(idle, 'POST', '/v1/videos/videos', { model: 'videos' }), 400);
    check(d, 'POST', '/v1/videos/videos', await json(idle, 'POST', '/v1/videos/videos', { model: 'videos', prompt: 'a fox', duration: 5 }, false), 401);
    const mcImage = check(
      d,
      'POST',
      '/v2/model-center/tasks',
      await json(idle, 'POST', '/v2/model-center/tasks', { model: 'imagegen-5.0', prompt: 'a fox' }),
      200,
    );
    const mcVideo = check(
      d,
      'POST',
      '/v2/model-center/tasks',
      await json(idle, 'POST', '/v2/model-center/tasks', { model: 'sd_2.5_discount_v1', prompt: 'a fox' }),
      200,
    );
    check(d, 'POST', '/v2/model-center/tasks', await json(idle, 'POST', '/v2/model-center/tasks', { model: 'nope' }), 400);

    // every query path answers any task of the caller in its family's shape
    const ids = [idOf(pic), idOf(clip), idOf(reel), idOf(motion), videos.json().data.projectId as string, idOf(mcImage), idOf(mcVideo)];
    for (const path of ['/v1/result/{id}', '/v1/videos/{id}', '/v1/reel/videos/{id}', '/v2/model-center/tasks/{id}']) {
      for (const id of ids) check(d, 'GET', path, await json(idle, 'GET', path.replace('{id}', id)), 200);
      check(d, 'GET', path, await json(idle, 'GET', path.replace('{id}', 'task_unknown')), 404);
      check(d, 'GET', path, await json(idle, 'GET', `${path.replace('{id}', ids[0]!)}?wait=61`), 400);
      check(d, 'GET', path, await json(idle, 'GET', path.replace('{id}', 'x'.repeat(101))), 414);
    }

    const cancel = '/v1/motion/videos/{id}/cancel';
    check(d, 'POST', cancel, await json(idle, 'POST', cancel.replace('{id}', idOf(motion))), 200);
    check(d, 'POST', cancel, await json(idle, 'POST', cancel.replace('{id}', idOf(motion))), 200); // again: answered as it is
    check(d, 'POST', cancel, await json(idle, 'POST', cancel.replace('{id}', 'task_unknown')), 404);
  });

  it('completed tasks (result URLs, actualDuration) and their result files', async () => {
    const d = docs[1]!;
    const created = await Promise.all([
      json(busy, 'POST', '/v1/pic/images', { model: 'pic', prompt: 'a fox' }),
      json(busy, 'POST', '/v2/model-center/tasks', { model: 'imagegen-5.0', prompt: 'a fox' }),
      json(busy, 'POST', '/clip/videos', { model: 'clip_3_1_fast', prompt: 'a boat' }),
    ]);
    for (const res of created) expect(res.statusCode, res.body).toBe(200);
    const ids = created.map(idOf);
    for (const id of ids) await busy.waitForTask(id, ['completed'], 60_000);
    const picReply = check(d, 'GET', '/v1/result/{id}', await json(busy, 'GET', `/v1/result/${ids[0]}`), 200).json();
    expect(picReply.image_url).toMatch(/^https?:\/\//);
    check(d, 'GET', '/v2/model-center/tasks/{id}', await json(busy, 'GET', `/v2/model-center/tasks/${ids[1]}`), 200);
    const clip = check(d, 'GET', '/v1/videos/{id}', await json(busy, 'GET', `/v1/videos/${ids[2]}`), 200).json();
    expect(clip.actualDuration).toBeGreaterThan(0);

    const link = new URL(picReply.image_url as string);
    const url = link.pathname + link.search;
    const got = check(d, 'GET', '/files/{taskId}/{name}', await busy.app.inject({ method: 'GET', url }), 200);
    check(d, 'HEAD', '/files/{taskId}/{name}', await busy.app.inject({ method: 'HEAD', url }), 200);
    check(d, 'GET', '/files/{taskId}/{name}', await busy.app.inject({ method: 'GET', url, headers: { range: 'bytes=0-9' } }), 206);
    check(d, 'GET', '/files/{taskId}/{name}', await busy.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(got.headers.etag) } }), 304);
    check(d, 'GET', '/files/{taskId}/{name}', await busy.app.inject({ method: 'GET', url, headers: { 'if-match': '"nope"' } }), 412);
    check(d, 'GET', '/files/{taskId}/{name}', await busy.app.inject({ method: 'GET', url: url.replace(/sig=[^&]+/, 'sig=AAAA') }), 403);
    check(d, 'HEAD', '/files/{taskId}/{name}', await busy.app.inject({ method: 'HEAD', url: url.replace(/sig=[^&]+/, 'sig=AAAA') }), 403);

    // a task's copy of a caller medium, as an upstream fetches it (G92)
    const inputs = busy.gateway.storage.inputs!;
    await inputs.put('task_openapi', '0-images', { data: await image(32, 32) });
    const signedInput = new URL(busy.signer.signInputUrl('task_openapi', '0-images', Date.now() + 60_000));
    const inputUrl = signedInput.pathname + signedInput.search;
    const input = check(d, 'GET', '/inputs/{taskId}/{name}', await busy.app.inject({ method: 'GET', url: inputUrl }), 200);
    expect(input.headers['content-type']).toBe('image/png');
    check(d, 'HEAD', '/inputs/{taskId}/{name}', await busy.app.inject({ method: 'HEAD', url: inputUrl }), 200);
    check(d, 'GET', '/inputs/{taskId}/{name}', await busy.app.inject({ method: 'GET', url: inputUrl.replace(/sig=[^&]+/, 'sig=AAAA') }), 403);
    check(d, 'HEAD', '/inputs/{taskId}/{name}', await busy.app.inject({ method: 'HEAD', url: inputUrl.replace('0-images', '1-images') }), 403);
  }, 90_000);

  it('chat: the JSON reply, the event stream, and errors in the chat body', async () => {
    const d = idleDoc;
    const body = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'Hello' }] };
    check(d, 'POST', '/v1/chat/completions', await json(idle, 'POST', '/v1/chat/completions', body), 200);
    const stream = check(d, 'POST', '/v1/chat/completions', await json(idle, 'POST', '/v1/chat/completions', { ...body, stream: true }), 200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.body).toMatch(/data: \[DONE\]\n\n$/);
    check(d, 'POST', '/v1/chat/completions', await json(idle, 'POST', '/v1/chat/completions', { ...body, model: 'nope' }), 400);
    check(d, 'POST', '/v1/chat/completions', await json(idle, 'POST', '/v1/chat/completions', body, false), 401);
  });

  it('assets, the account and health', async () => {
    const d = idleDoc;
    const boundary = '----openapi';
    const png = await image(64, 64);
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const asset = check(
      d,
      'POST',
      '/v2/model-center/assets',
      await idle.app.inject({
        method: 'POST',
        url: '/v2/model-center/assets',
        headers: { ...idle.auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload,
      }),
      200,
    );
    check(d, 'POST', '/v2/model-center/assets', await json(idle, 'POST', '/v2/model-center/assets', { url: 'ftp://x' }), 400);
    const path = '/v2/model-center/assets/{id}';
    check(d, 'GET', path, await json(idle, 'GET', path.replace('{id}', idOf(asset))), 200);
    check(d, 'DELETE', path, await json(idle, 'DELETE', path.replace('{id}', idOf(asset))), 200);
    check(d, 'GET', path, await json(idle, 'GET', path.replace('{id}', idOf(asset))), 404);
    check(d, 'DELETE', path, await json(idle, 'DELETE', path.replace('{id}', idOf(asset))), 404);

    check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account'), 200);
    expect(check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account?days=7'), 200).json().period.days).toBe(7);
    expect(check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account?days=366'), 200).json().period.days).toBe(366);
    check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account?days=367'), 400);
    const days0 = check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account?days=0'), 400).json().error;
    expect(days0).toMatchObject({ param: 'days', message: 'querystring days must be a whole number of days from 1 to 366 (got "0")' });
    check(d, 'GET', '/v1/account', await json(idle, 'GET', '/v1/account', undefined, false), 401);

    check(d, 'GET', '/healthz', await idle.app.inject({ method: 'GET', url: '/healthz' }), 200);
    check(d, 'GET', '/readyz', await idle.app.inject({ method: 'GET', url: '/readyz' }), 200);
    const ping = idle.store.ping.bind(idle.store);
    idle.store.ping = async () => {
      throw new Error('store down');
    };
    try {
      check(d, 'GET', '/readyz', await idle.app.inject({ method: 'GET', url: '/readyz' }), 503);
    } finally {
      idle.store.ping = ping;
    }
  });

  it('the task list, the status stream, webhook secrets and deliveries', async () => {
    const d = docs[1]!;
    const created = await json(busy, 'POST', '/v1/pic/images', { model: 'pic', prompt: 'a list', callback_url: 'https://hooks.example.com/in' });
    expect(created.statusCode, created.body).toBe(200);
    const id = idOf(created);
    await busy.waitForTask(id, ['completed'], 60_000);
    const list = check(d, 'GET', '/v1/tasks', await json(busy, 'GET', '/v1/tasks?limit=2'), 200).json();
    expect(list.data.length).toBeGreaterThan(0);
    check(d, 'GET', '/v1/tasks', await json(busy, 'GET', '/v1/tasks?limit=0'), 400);
    const stream = check(d, 'GET', '/v1/tasks/{id}/events', await json(busy, 'GET', `/v1/tasks/${id}/events`), 200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.body).toContain('"status":"completed"');
    check(d, 'GET', '/v1/tasks/{id}/events', await json(busy, 'GET', '/v1/tasks/task_unknown/events'), 404);
    check(d, 'GET', '/v1/tasks/{id}/deliveries', await json(busy, 'GET', `/v1/tasks/${id}/deliveries`), 200);
    check(d, 'GET', '/v1/tasks/{id}/deliveries', await json(busy, 'GET', '/v1/tasks/task_unknown/deliveries'), 404);
    check(d, 'GET', '/v1/webhooks/secret', await json(busy, 'GET', '/v1/webhooks/secret'), 200);
    check(d, 'GET', '/v1/webhooks/secret', await json(busy, 'GET', '/v1/webhooks/secret', undefined, false), 401);
    check(d, 'POST', '/v1/webhooks/secret/rotate', await json(busy, 'POST', '/v1/webhooks/secret/rotate'), 200);
    check(d, 'POST', '/v1/webhooks/secret/rotate', await json(busy, 'POST', '/v1/webhooks/secret/rotate', undefined, false), 401);
  }, 90_000);

  it('provider callbacks: a signed delivery and refusals', async () => {
    const d = docs[2]!;
    const path = '/v1/provider-callbacks/{provider}/{task}';
    const delivery = JSON.stringify({ id: 'p_openapi', status: 'succeeded' });
    const signed = rep.webhooks.sign(delivery);
    check(
      d,
      'POST',
      path,
      await cb.app.inject({
        method: 'POST',
        url: '/v1/provider-callbacks/rep/task_x',
        headers: { 'content-type': 'application/json', ...signed },
        payload: delivery,
      }),
      200,
    );
    check(
      d,
      'POST',
      path,
      await cb.app.inject({ method: 'POST', url: '/v1/provider-callbacks/rep/task_x', headers: { 'content-type': 'application/json' }, payload: '{}' }),
      400,
    );
    check(
      d,
      'POST',
      path,
      await cb.app.inject({
        method: 'POST',
        url: '/v1/provider-callbacks/nobody/task_x',
        headers: { 'content-type': 'application/json', ...signed },
        payload: delivery,
      }),
      404,
    );
    check(
      d,
      'POST',
      path,
      await cb.app.inject({
        method: 'POST',
        url: '/v1/provider-callbacks/rep/task_x',
        headers: { 'content-type': 'application/octet-stream', ...signed },
        payload: Buffer.from([0, 255]),
      }),
      401,
    );
  });
});

describe("the admin API's replies match the document too", () => {
  it('keys, accounts, grants, the ledger, the audit log, the settings, tasks, channels, usage and tasks per minute: successes and errors', async () => {
    const d = idleDoc;
    const admin = (await createApiKey(idle.store.keys, 'openapi admin', {}, Date.now(), { fields: { role: 'admin' } })).secret;
    const call = (method: string, url: string, payload?: unknown, key = admin) =>
      idle.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${key}`, ...(payload !== undefined && { 'content-type': 'application/json' }) },
        ...(payload !== undefined && { payload: JSON.stringify(payload) }),
      });
    const keys = '/admin/v1/keys';
    const created = check(
      d,
      'POST',
      keys,
      await call('POST', keys, { name: 'documented', models: ['pic'], expires_at: Math.floor(Date.now() / 1000) + 60, limits: { credits: 2.5 } }),
      200,
    ).json();
    check(d, 'POST', keys, await call('POST', keys, { name: 'x', role: 'root' }), 400);
    check(d, 'POST', keys, await call('POST', keys, { name: 'x' }, idle.key), 403);
    check(d, 'GET', keys, await call('GET', `${keys}?limit=1`), 200);
    check(d, 'GET', keys, await call('GET', `${keys}?limit=0`), 400);
    const one = `${keys}/{id}`;
    check(d, 'GET', one, await call('GET', `${keys}/${created.id}`), 200);
    check(d, 'GET', one, await call('GET', `${keys}/key_unknown`), 404);
    check(d, 'PATCH', one, await call('PATCH', `${keys}/${created.id}`, { models: null, limits: { tasks_in_flight: 4 } }), 200);
    check(d, 'PATCH', one, await call('PATCH', `${keys}/${created.id}`, { role: 'admin' }), 400);
    check(d, 'POST', `${one}/rotate`, await call('POST', `${keys}/${created.id}/rotate`, { grace_seconds: 30 }), 200);
    check(d, 'POST', `${one}/rotate`, await call('POST', `${keys}/key_unknown/rotate`, {}), 404);
    check(d, 'POST', `${one}/revoke`, await call('POST', `${keys}/${created.id}/revoke`), 200);
    check(d, 'POST', `${one}/revoke`, await call('POST', `${keys}/key_unknown/revoke`), 404);
    check(d, 'POST', `${one}/rotate`, await call('POST', `${keys}/${created.id}/rotate`, {}), 409);

    const accounts = '/admin/v1/accounts';
    const account = check(d, 'POST', accounts, await call('POST', accounts, { name: 'documented' }), 200).json();
    check(d, 'POST', accounts, await call('POST', accounts, {}), 400);
    check(d, 'GET', accounts, await call('GET', `${accounts}?q=doc`), 200);
    check(d, 'GET', accounts, await call('GET', `${accounts}?cursor=x`), 400);
    check(d, 'GET', `${accounts}/{id}`, await call('GET', `${accounts}/${account.id}`), 200);
    check(d, 'GET', `${accounts}/{id}`, await call('GET', `${accounts}/acct_unknown`), 404);
    const grants = `${accounts}/{id}/grants`;
    check(d, 'POST', grants, await call('POST', `${accounts}/${account.id}/grants`, { amount: 3.25, note: 'documented' }), 200);
    check(d, 'POST', grants, await call('POST', `${accounts}/${account.id}/grants`, { amount: -1000, note: 'too much' }), 409);
    check(d, 'POST', grants, await call('POST', `${accounts}/acct_unknown/grants`, { amount: 1, note: 'n' }), 404);
    const ledger = `${accounts}/{id}/ledger`;
    check(d, 'GET', ledger, await call('GET', `${accounts}/${account.id}/ledger?limit=5&kind=grant`), 200);
    check(d, 'GET', ledger, await call('GET', `${accounts}/acct_unknown/ledger`), 404);
    const audit = check(d, 'GET', '/admin/v1/audit', await call('GET', '/admin/v1/audit?action=key.create&since=0'), 200).json();
    expect(audit.data.length).toBeGreaterThan(0);
    check(d, 'GET', '/admin/v1/audit', await call('GET', '/admin/v1/audit?since=yesterday'), 400);
    check(d, 'GET', '/admin/v1/settings', await call('GET', '/admin/v1/settings'), 200);
    check(d, 'GET', '/admin/v1/settings', await call('GET', '/admin/v1/settings', undefined, idle.key), 403);

    const submitted = await idle.app.inject({ method: 'POST', url: '/v1/pic/images', headers: idle.auth(), payload: { model: 'pic-2', prompt: 'documented' } });
    const taskId = (submitted.json() as { id: string }).id;
    check(d, 'GET', '/admin/v1/tasks', await call('GET', '/admin/v1/tasks?status=queued&limit=2'), 200);
    check(d, 'GET', '/admin/v1/tasks', await call('GET', '/admin/v1/tasks?status=done'), 400);
    check(d, 'GET', '/admin/v1/tasks/{id}', await call('GET', `/admin/v1/tasks/${taskId}`), 200);
    check(d, 'GET', '/admin/v1/tasks/{id}', await call('GET', '/admin/v1/tasks/task_unknown'), 404);
    check(d, 'POST', '/admin/v1/tasks/{id}/cancel', await call('POST', `/admin/v1/tasks/${taskId}/cancel`), 200);
    check(d, 'POST', '/admin/v1/tasks/{id}/cancel', await call('POST', '/admin/v1/tasks/task_unknown/cancel'), 404);
    check(d, 'GET', '/admin/v1/channels', await call('GET', '/admin/v1/channels'), 200);
    check(d, 'GET', '/admin/v1/channels', await call('GET', '/admin/v1/channels', undefined, idle.key), 403);
    check(d, 'POST', '/admin/v1/channels/{id}/probe', await call('POST', '/admin/v1/channels/sandbox/probe'), 200);
    check(d, 'POST', '/admin/v1/channels/{id}/probe', await call('POST', '/admin/v1/channels/nope/probe'), 404);
    check(d, 'GET', '/admin/v1/usage', await call('GET', '/admin/v1/usage?group_by=key&interval=day'), 200);
    check(d, 'GET', '/admin/v1/usage', await call('GET', '/admin/v1/usage?interval=week'), 400);
    check(d, 'GET', '/admin/v1/task-activity', await call('GET', '/admin/v1/task-activity?minutes=5'), 200);
    check(d, 'GET', '/admin/v1/task-activity', await call('GET', '/admin/v1/task-activity?minutes=0'), 400);
  });
});

describe("the web console's session routes match the document too (G372)", () => {
  it('sign-in, the session, sign-out: successes and errors', async () => {
    const d = idleDoc;
    const session = '/console/session';
    const post = (payload: unknown) =>
      idle.app.inject({ method: 'POST', url: session, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const signedIn = check(d, 'POST', session, await post({ api_key: idle.key }), 200);
    expect(d.paths[session]!.post!.responses['200']).toHaveProperty('headers.set-cookie');
    check(d, 'POST', session, await post({ api_key: 'not-a-key-of-this-gateway' }), 401);
    check(d, 'POST', session, await post({ key: idle.key }), 400);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const csrf = signedIn.json().csrf_token as string;
    check(d, 'GET', session, await idle.app.inject({ method: 'GET', url: session, headers: { cookie } }), 200);
    check(d, 'GET', session, await idle.app.inject({ method: 'GET', url: session }), 401);
    check(d, 'DELETE', session, await idle.app.inject({ method: 'DELETE', url: session, headers: { cookie } }), 403);
    check(d, 'DELETE', session, await idle.app.inject({ method: 'DELETE', url: session, headers: { cookie, 'x-csrf-token': csrf } }), 204);
    check(d, 'DELETE', session, await idle.app.inject({ method: 'DELETE', url: session, headers: { cookie, 'x-csrf-token': csrf } }), 401);
  });
});

/**
 * Operations whose error replies no request can bring about here, and why. `/healthz` answers
 * only 200, or a 503 once the process is shutting down.
 */
const NO_ERROR_DRIVEN: Record<string, string> = { 'GET /healthz': 'a 503 only while shutting down' };

describe('coverage', () => {
  it('every operation of the document was driven to a documented success and (where one can be caused) an error', () => {
    const missing: string[] = [];
    const ops = new Set(docs.flatMap((doc) => Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))));
    for (const op of ops) {
      const statuses = [...(seen.get(op) ?? [])];
      if (!statuses.some((s) => s >= 200 && s < 300)) missing.push(`${op}: no 2xx reply checked`);
      if (!(op in NO_ERROR_DRIVEN) && !statuses.some((s) => s >= 400)) missing.push(`${op}: no error reply checked`);
    }
    expect(missing.join('\n'), 'add requests for these to test/gateway/openapi-replies.test.ts').toBe('');
  });
});
