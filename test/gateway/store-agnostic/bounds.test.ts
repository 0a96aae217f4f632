import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../../src/http/body-bounds.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

// Bounds on what one caller can make the gateway hold or do (G78).
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false, env: { MEDIAGATE_MAX_TASKS_IN_FLIGHT: '3', MEDIAGATE_BODY_LIMIT: '4096' } });
});
afterAll(async () => {
  await h.close();
});

const post = (
  payload: string | Record<string, unknown>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  key = h.key,
  url = '/v1/pic/images',
) => h.app.inject({ method: 'POST', url, headers: { ...h.auth(key), ...headers }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

describe('tasks in flight per key', () => {
  it('past MEDIAGATE_MAX_TASKS_IN_FLIGHT queued+processing tasks a key gets a 429; others are unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await post({ model: 'pic', prompt: `t${i}` })).statusCode).toBe(200);
    const over = await post({ model: 'pic', prompt: 'one too many' });
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe('too_many_tasks_in_flight');
    expect(over.headers['retry-after']).toBe('5');
    expect((await post({ model: 'pic', prompt: 'bob' }, undefined, h.otherKey)).statusCode).toBe(200);
  });

  it('concurrent submits cannot slip past the limit between commits', async () => {
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => post({ model: 'pic', prompt: `burst ${i}` }, undefined, h.otherKey)));
    expect(replies.filter((r) => r.statusCode === 200)).toHaveLength(2); // bob had 1 already
  });
});

describe('malformed and oversized bodies: a clear 4xx, never a 5xx', () => {
  it.each([
    ['JSON nested 40 levels', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`, undefined, 400, 'invalid_json'],
    ['truncated JSON', '{"model":"pic","prompt":"x"', undefined, 400, 'invalid_json'],
    ['JSON that is not an object', '[1,2,3]', undefined, 400, null],
    ['a JSON string', '"pic"', undefined, 400, null],
    ['an empty body', '', undefined, 400, 'invalid_json'],
    ['wrong content type', 'model=pic&prompt=x', { 'content-type': 'application/x-www-form-urlencoded' }, 400, 'unsupported_content_type'],
    ['no content type', '{"model":"pic","prompt":"x"}', { 'content-type': '' }, 400, null],
    ['a body over MEDIAGATE_BODY_LIMIT', JSON.stringify({ model: 'pic', prompt: 'x'.repeat(5000) }), undefined, 413, 'body_too_large'],
  ] as const)('%s', async (_what, payload, headers, status, code) => {
    const res = await post(payload, headers ?? { 'content-type': 'application/json' });
    expect(res.statusCode, res.body).toBe(status);
    const err = res.json().error;
    expect(typeof err.message).toBe('string');
    if (code) expect(err.code).toBe(code);
  });

  it('a body over the limit is told the limit (G485)', async () => {
    const res = await post(JSON.stringify({ model: 'pic', prompt: 'x'.repeat(5000) }), { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.message).toBe('The request body is larger than this server accepts (4 KiB)'); // MEDIAGATE_BODY_LIMIT=4096
  });

  it('nesting is measured without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep, 32)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: {} }] }, 3)).toBe(true);
  });
});

describe('slow and idle clients (G78)', () => {
  it('the server closes idle connections after 90 s (between requests too), wants the headers within 10 s (G84) and a request within 120 s', () => {
    const server = h.app.server;
    expect(server.keepAliveTimeout).toBe(90_000); // idle keep-alive connection after a response
    expect(server.timeout).toBe(90_000); // a socket with no activity at all
    expect(server.headersTimeout).toBe(10_000); // MEDIAGATE_HEADERS_TIMEOUT_SECONDS
    expect(server.requestTimeout).toBe(120_000);
  });

  it("a kept-alive connection that answered a request is told 90 s and idles out after it, not after Fastify's 72 s", async () => {
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const sockets: Socket[] = [];
    h.app.server.on('connection', (s: Socket) => sockets.push(s));
    const res = await fetch(`${url}/healthz`); // undici keeps the connection alive
    expect(res.status).toBe(200);
    await res.text();
    expect(res.headers.get('keep-alive')).toBe('timeout=90'); // what clients are told
    const [socket] = sockets;
    // the idle timer Node arms after the response: the advertised 90 s plus Node's fixed 1 s margin,
    // so a client reusing the connection just before 90 s never races the close
    expect(socket?.timeout).toBe(91_000);
  });
});
