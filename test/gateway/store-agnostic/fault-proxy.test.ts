import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy.js';
import { missingResult } from '../../helpers/fault-proxy-results.js';
import { errorCode, send, startTarget, type Target } from '../../helpers/fault-proxy-target.js';
import { createHarness } from '../../helpers/harness.js';
import { within } from '../../helpers/within.js';

// The fault proxy (test/helpers/fault-proxy.ts) against a tiny target: what it forwards, each
// fault, rule order and counts, a dead host and back, streams passing through unbuffered; and in
// front of a real mediagate: a create never heard, replayed by its Idempotency-Key; result files.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ target: Target; proxy: FaultProxy }> {
  const target = await startTarget();
  cleanups.push(() => target.close());
  const proxy = await startFaultProxy({ target: target.url });
  cleanups.push(() => proxy.close());
  return { target, proxy };
}

describe('fault proxy: forwarding', () => {
  it("forwards method, path, query, body and end-to-end headers both ways; host is the target's; hop-by-hop headers stay behind", async () => {
    const { target, proxy } = await setup();
    const res = await send(`${proxy.url}/echo/x?wait=5`, {
      method: 'POST',
      body: '{"model":"m"}',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer k',
        'idempotency-key': 'task_1',
        connection: 'close, x-hop',
        'x-hop': 'drop me',
        'keep-alive': 'timeout=5',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-target']).toBe('yes');
    const echoed = JSON.parse(res.text);
    expect(echoed).toMatchObject({ method: 'POST', url: '/echo/x?wait=5', body: '{"model":"m"}' });
    expect(echoed.headers).toMatchObject({
      host: new URL(target.url).host,
      authorization: 'Bearer k',
      'idempotency-key': 'task_1',
      'content-type': 'application/json',
    });
    expect(echoed.headers['x-hop']).toBeUndefined();
    expect(echoed.headers['keep-alive']).toBeUndefined();
    expect(proxy.requests).toEqual([
      expect.objectContaining({
        seq: 0,
        method: 'POST',
        url: '/echo/x?wait=5',
        idempotencyKey: 'task_1',
        body: '{"model":"m"}',
        received: true,
        action: 'forwarded',
        status: 200,
        targetStatus: 200,
        response: res.text,
        targetHeaders: expect.objectContaining({ 'x-target': 'yes' }),
      }),
    ]);
    expect(proxy.requests[0]!.closedBy).toBeUndefined();
  });

  it('passes a stream through event by event: the target sends the next event only after the client got the last', async () => {
    const { target, proxy } = await setup();
    const got: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      http
        .get(`${proxy.url}/sse`, { agent: false }, (res) => {
          expect(res.headers['content-type']).toBe('text/event-stream');
          res.setEncoding('utf8');
          res.on('data', (text: string) => {
            got.push(text);
            target.sseGates.shift()?.();
          });
          res.on('end', resolve);
        })
        .on('error', reject);
    });
    // the first gate opens once the headers are through; each later one only after a chunk arrived
    await within(
      (async () => {
        while (target.sseGates.length === 0) await new Promise((r) => setTimeout(r, 5));
      })(),
      5000,
      'the stream to open',
    );
    target.sseGates.shift()!();
    await within(done, 5000, 'the whole stream through the proxy (a buffering proxy never delivers the first event)');
    expect(got.join('')).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\ndata: [DONE]\n\n');
    expect(got.length).toBeGreaterThanOrEqual(3);
  });

  it('without a target answers 502; setTarget forwards from then on', async () => {
    const target = await startTarget();
    cleanups.push(() => target.close());
    const proxy = await startFaultProxy();
    cleanups.push(() => proxy.close());
    expect([(await send(`${proxy.url}/echo`)).status, proxy.target]).toEqual([502, '']);
    proxy.setTarget(target.url);
    expect([(await send(`${proxy.url}/echo`)).status, proxy.target]).toEqual([200, target.url]);
    expect(target.seen).toEqual(['GET /echo']);
  });

  it('answers 502 naming the cause when the target cannot be reached', async () => {
    const { target, proxy } = await setup();
    await target.close();
    const res = await send(`${proxy.url}/echo`);
    expect(res.status).toBe(502);
    expect(JSON.parse(res.text).error.code).toBe('upstream_error');
    const seen = proxy.requests[0]!;
    expect([seen.action, seen.status, seen.targetStatus]).toEqual(['forwarded', 502, undefined]);
    expect(seen.targetError).toContain('ECONNREFUSED');
  });
});

describe('fault proxy: faults', () => {
  it('a status fault answers without forwarding: a default error body, or the given body and headers; 429 with Retry-After', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { path: '/echo/a' }, fault: { status: 503 } });
    proxy.addRule({ match: { path: '/echo/b' }, fault: { status: 500, body: 'boom', headers: { 'x-fault': '1' } } });
    proxy.addRule({ match: { path: '/echo/c' }, fault: { status: 429, retryAfter: 7 } });
    const a = await send(`${proxy.url}/echo/a`, { method: 'POST', body: '{}' });
    expect(a.status).toBe(503);
    expect(JSON.parse(a.text)).toEqual({ error: { message: 'fault-proxy: injected HTTP 503', type: 'server_error', param: null, code: 'injected_503' } });
    const b = await send(`${proxy.url}/echo/b`);
    expect([b.status, b.text, b.headers['x-fault'], b.headers['content-type']]).toEqual([500, 'boom', '1', 'text/plain; charset=utf-8']);
    const c = await send(`${proxy.url}/echo/c`);
    expect([c.status, c.headers['retry-after'], JSON.parse(c.text).error.code]).toEqual([429, '7', 'rate_limited']);
    expect(target.seen).toEqual([]);
    expect(proxy.requests.map((r) => [r.action, r.status])).toEqual([
      ['status', 503],
      ['status', 500],
      ['status', 429],
    ]);
  });

  it('reset cuts the connection without an answer and without forwarding', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ fault: 'reset' });
    expect(await errorCode(send(`${proxy.url}/tasks`, { method: 'POST', body: '{"prompt":"x"}' }))).toBe('ECONNRESET');
    expect(target.created).toBe(0);
    const seen = proxy.requests[0]!;
    expect([seen.action, seen.status, seen.body, seen.closedBy]).toEqual(['reset', undefined, '{"prompt":"x"}', 'proxy']);
  });

  it('hang never answers while later requests are answered, and is released at close', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { path: '/echo/slow' }, fault: 'hang' });
    let settled = false;
    const hung = errorCode(send(`${proxy.url}/echo/slow`)).finally(() => {
      settled = true;
    });
    await proxy.waitForRequest({ path: '/echo/slow' });
    expect((await send(`${proxy.url}/echo/fast`)).status).toBe(200); // answered after the hung one arrived
    expect(settled).toBe(false);
    expect(target.seen).toEqual(['GET /echo/fast']);
    await proxy.close();
    expect(await within(hung, 5000, 'the hung request to end at close')).toBe('ECONNRESET');
    expect([proxy.requests[0]!.action, proxy.requests[0]!.status, proxy.requests[0]!.closedBy]).toEqual(['hang', undefined, 'proxy']);
  });

  it('a hung request the client gives up on is recorded as closed by the client', async () => {
    const { proxy } = await setup();
    proxy.addRule({ fault: 'hang' });
    const controller = new AbortController();
    const hung = fetch(`${proxy.url}/echo/slow`, { signal: controller.signal }).catch(() => 'aborted');
    const seen = await proxy.waitForRequest({ path: '/echo/slow' });
    expect(seen.closedBy).toBeUndefined();
    controller.abort();
    expect(await hung).toBe('aborted');
    await within(
      (async () => {
        while (seen.closedBy === undefined) await new Promise((r) => setTimeout(r, 5));
      })(),
      5000,
      'the proxy to see the client go',
    );
    expect(seen.closedBy).toBe('client');
  });

  it('malformed answers 200 with a JSON content type and a body that does not parse', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ fault: 'malformed' });
    const res = await send(`${proxy.url}/task/processing`);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'application/json']);
    expect(() => JSON.parse(res.text)).toThrow();
    expect(target.seen).toEqual([]);
  });

  it('forwardThen reset: the target acts (the task is created), then the client gets no answer', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { method: 'POST', path: '/tasks' }, times: 1, fault: { forwardThen: 'reset' } });
    expect(await errorCode(send(`${proxy.url}/tasks`, { method: 'POST', body: '{}', headers: { 'idempotency-key': 'task_9' } }))).toBe('ECONNRESET');
    expect(target.created).toBe(1);
    const again = await send(`${proxy.url}/tasks`, { method: 'POST', body: '{}', headers: { 'idempotency-key': 'task_9' } });
    expect(JSON.parse(again.text).id).toBe('t2');
    expect(proxy.requests.map((r) => [r.action, r.idempotencyKey, r.targetStatus, r.status, r.closedBy])).toEqual([
      ['forward-then-reset', 'task_9', 200, undefined, 'proxy'],
      ['forwarded', 'task_9', 200, 200, undefined],
    ]);
    // the answer the client never got is on record
    expect(JSON.parse(proxy.requests[0]!.response!)).toEqual({ id: 't1', status: 'queued' });
  });

  it('forwardThen hang: the target acts, its answer is held back until the client gives up', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { method: 'POST', path: '/tasks' }, times: 1, fault: { forwardThen: 'hang' } });
    const late = fetch(`${proxy.url}/tasks`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(300) }).then(
      () => 'answered',
      (err: Error) => err.name,
    );
    expect(await within(late, 5000, 'the client to give up')).toBe('TimeoutError');
    expect(target.created).toBe(1);
    const seen = proxy.requests[0]!;
    await within(
      (async () => {
        while (seen.closedBy === undefined) await new Promise((r) => setTimeout(r, 5));
      })(),
      5000,
      'the proxy to see the client go',
    );
    expect([seen.action, seen.targetStatus, seen.status, seen.closedBy, JSON.parse(seen.response!).id]).toEqual([
      'forward-then-hang',
      200,
      undefined,
      'client',
      't1',
    ]);
  });

  it("rewriteJson: missingResult points a completed task's result URLs at a URL that answers 404; other answers unchanged", async () => {
    const { proxy } = await setup();
    const gone = proxy.goneUrl(404, 't1.mp4');
    proxy.addRule({ match: { path: /^\/task\// }, fault: missingResult(gone) });
    const processing = JSON.parse((await send(`${proxy.url}/task/processing`)).text);
    expect(processing).toMatchObject({ status: 'processing', video_url: null });
    const done = await send(`${proxy.url}/task/completed`);
    expect(done.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(done.text)).toEqual({ id: 't1', status: 'completed', video_url: gone, image_url: null, progress: 100 });
    expect(JSON.parse(proxy.requests[1]!.response!).video_url).toBe(`${proxy.target}/files/t1.mp4`); // the record keeps the target's own
    const file = await send(gone);
    expect(file.status).toBe(404);
    expect(proxy.goneUrl(410)).not.toBe(gone);
    expect((await send(proxy.goneUrl(410))).status).toBe(410);
    expect(proxy.requests.map((r) => r.action)).toEqual(['rewrite-json', 'rewrite-json', 'gone', 'gone']);

    // firstOnly: the file is missing at the first completed answer of each query only
    proxy.clearRules();
    proxy.addRule({ match: { path: /^\/task\// }, fault: missingResult(gone, { firstOnly: true }) });
    const urls: unknown[] = [];
    for (const path of ['/task/processing', '/task/completed', '/task/completed']) urls.push(JSON.parse((await send(`${proxy.url}${path}`)).text).video_url);
    expect(urls).toEqual([null, gone, `${proxy.target}/files/t1.mp4`]);
  });
});

describe('fault proxy: rules', () => {
  it('the first live matching rule applies; times counts applications, skip lets the first matches through', async () => {
    const { proxy } = await setup();
    const first = proxy.addRule({ match: { path: '/echo/q' }, times: 2, fault: { status: 503 } });
    const second = proxy.addRule({ match: { path: '/echo/q' }, fault: { status: 500 } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(`${proxy.url}/echo/q`)).status);
    expect(statuses).toEqual([503, 503, 500, 500]);
    expect([first.applied, second.applied]).toEqual([2, 2]);
    expect((await send(`${proxy.url}/echo/other`)).status).toBe(200);

    proxy.clearRules();
    const third = proxy.addRule({ match: { method: 'POST', path: '/echo/q' }, skip: 1, times: 1, fault: { status: 502 } });
    const posts: number[] = [];
    for (let i = 0; i < 3; i++) posts.push((await send(`${proxy.url}/echo/q`, { method: 'POST', body: '{}' })).status);
    expect(posts).toEqual([200, 502, 200]);
    expect((await send(`${proxy.url}/echo/q`)).status).toBe(200); // GET: not matched
    expect([third.matched, third.applied]).toEqual([2, 1]);
  });

  it('matches the request body; a request is read whole before its rule is chosen', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { body: /\[hold\]/ }, fault: { status: 503 } });
    const post = (body: string) => send(`${proxy.url}/tasks`, { method: 'POST', body }).then((r) => r.status);
    expect([await post('{"prompt":"a [hold] b"}'), await post('{"prompt":"go"}')]).toEqual([503, 200]);
    expect(target.created).toBe(1);
    // a body sent in pieces still matches (and is forwarded whole)
    const pieces = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${proxy.url}/echo/pieces`, { method: 'POST', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"prompt":"[ho');
      setTimeout(() => req.end('ld]"}'), 20);
    });
    expect(pieces).toBe(503);
    expect(proxy.requests.at(-1)!.body).toBe('{"prompt":"[hold]"}');
  });

  it("matches headers (a later generation's Idempotency-Key) and can be removed", async () => {
    const { proxy } = await setup();
    const rule = proxy.addRule({ match: { headers: { 'idempotency-key': /\.2$/ } }, fault: { status: 503 } });
    const key = (k: string) => send(`${proxy.url}/echo`, { headers: { 'idempotency-key': k } }).then((r) => r.status);
    expect([await key('task_1'), await key('task_1.2'), await key('task_1.3')]).toEqual([200, 503, 200]);
    rule.remove();
    expect(await key('task_1.2')).toBe(200);
  });

  it('waitForRequest resolves with the n-th matching request, counting those already seen', async () => {
    const { proxy } = await setup();
    await send(`${proxy.url}/echo/1`);
    const third = proxy.waitForRequest({ path: /^\/echo\// }, 3);
    await send(`${proxy.url}/echo/2`);
    await send(`${proxy.url}/other`);
    await send(`${proxy.url}/echo/3`);
    expect((await within(third, 5000, 'the third /echo request')).url).toBe('/echo/3');
  });
});

describe('fault proxy: down and up', () => {
  it('down refuses connections and drops open ones; up listens again on the same port and forwards', async () => {
    const { target, proxy } = await setup();
    proxy.addRule({ match: { path: '/echo/slow' }, fault: 'hang' });
    const hung = errorCode(send(`${proxy.url}/echo/slow`));
    await proxy.waitForRequest({ path: '/echo/slow' });
    await proxy.setDown(true);
    expect(await within(hung, 5000, 'the open connection to drop')).toBe('ECONNRESET');
    expect(await errorCode(send(`${proxy.url}/echo/a`))).toBe('ECONNREFUSED');
    await proxy.setDown(false);
    const res = await send(`${proxy.url}/echo/b`);
    expect(res.status).toBe(200);
    expect(target.seen).toEqual(['GET /echo/b']);
    expect(proxy.requests.map((r) => r.url)).toEqual(['/echo/slow', '/echo/b']);
  });
});

describe('fault proxy in front of a mediagate', () => {
  it('a create accepted but never heard, then sent again with its Idempotency-Key, is the same task; chat SSE passes through', async () => {
    const h = await createHarness();
    cleanups.push(() => h.close());
    const proxy = await startFaultProxy({ target: await h.app.listen({ port: 0, host: '127.0.0.1' }) });
    cleanups.push(() => proxy.close());
    proxy.addRule({ match: { method: 'POST', path: '/v1/motion/videos' }, times: 1, fault: { forwardThen: 'reset' } });
    const create = () =>
      send(`${proxy.url}/v1/motion/videos`, {
        method: 'POST',
        // the smallest video the family accepts (G417): the sandbox renders it once the create went through
        body: JSON.stringify({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a cat' }], duration: 1, ratio: '1:1' }),
        headers: { ...h.auth(), 'content-type': 'application/json', 'idempotency-key': 'task_relay_1' },
      });
    expect(await errorCode(create())).toBe('ECONNRESET');
    const again = await create();
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(proxy.requests.map((r) => [r.action, r.targetStatus])).toEqual([
      ['forward-then-reset', 200],
      ['forwarded', 200],
    ]);

    const chat = await send(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      headers: { ...h.auth(), 'content-type': 'application/json' },
    });
    expect(chat.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(chat.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it("result files pass the proxy when the upstream's public URL is the proxy's", async () => {
    const proxy = await startFaultProxy();
    cleanups.push(() => proxy.close());
    const h = await createHarness({ env: { MEDIAGATE_PUBLIC_URL: proxy.url } });
    cleanups.push(() => h.close());
    proxy.setTarget(await h.app.listen({ port: 0, host: '127.0.0.1' }));
    const headers = { ...h.auth(), 'content-type': 'application/json' };
    const id = JSON.parse((await send(`${proxy.url}/v1/pic/images`, { method: 'POST', body: '{"model":"pic","prompt":"a cat"}', headers })).text).id as string;
    await h.waitForTask(id, ['completed']);
    const url = JSON.parse((await send(`${proxy.url}/v1/result/${id}`, { headers })).text).image_url as string;
    expect(url.startsWith(`${proxy.url}/`)).toBe(true);
    const file = await send(url);
    expect([file.status, file.headers['content-type']]).toEqual([200, 'image/png']);
    expect(proxy.requests.at(-1)).toMatchObject({ method: 'GET', action: 'forwarded', targetStatus: 200 });
  });
});
