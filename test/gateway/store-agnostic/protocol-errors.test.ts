import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatProvider } from '../../../src/chat/types.js';
import { AppError } from '../../../src/errors.js';
import { clientError, clientErrorResponse } from '../../../src/http/protocol-errors.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { within } from '../../helpers/within.js';
import { countTasksByStatus } from '../../helpers/task-rows.js';

// Errors raised before a route is found, over a real socket: Fastify's router errors and what
// Node's HTTP parser refuses answer the standard error body with a catalog code (D9, G111).
let h: Harness;
let port: number;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
  const url = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
  port = Number(url.port);
});
afterAll(async () => {
  await h.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the HTTP/1.1 responses in `data` (each with a Content-Length). */
function parseResponses(data: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return out;
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) return out;
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') });
    rest = rest.subarray(end + 4 + length);
  }
}

/** Writes `bytes` on a new connection (then ends its side with `halfClose`); resolves with every response once the server closes it. */
function raw(bytes: string, { halfClose = false } = {}): Promise<RawResponse[]> {
  return within(
    new Promise<RawResponse[]>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(parseResponses(Buffer.concat(chunks))));
      socket.write(bytes, 'latin1');
      if (halfClose) socket.end();
    }),
    10_000,
    'the server to answer and close the connection',
  );
}

function expectStandardError(res: RawResponse, status: number, code: string, message: RegExp): void {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = JSON.parse(res.body) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, type: 'invalid_request_error' });
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.message).toMatch(message);
}

/** A well-formed request the server closes the connection after. */
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.key}\r\nConnection: close\r\n\r\n`;

describe('router errors (Fastify frameworkErrors)', () => {
  it('a path with a percent-escape that is not UTF-8: 400 invalid_url', async () => {
    const [res, ...more] = await raw(get('/v1/result/%ff'));
    expect(more).toEqual([]);
    expectStandardError(res!, 400, 'invalid_url', /^The path "\/v1\/result\/%ff" is not a valid URL: a percent-escape in it does not decode to UTF-8 text$/);
    expect(res!.headers['x-request-id']).toMatch(/\S/);
  });

  it('an 8 KB id: 414 uri_too_long', async () => {
    const [res, ...more] = await raw(get(`/v1/result/${'a'.repeat(8000)}`));
    expect(more).toEqual([]);
    expectStandardError(res!, 414, 'uri_too_long', /^A path segment of "\/v1\/result\/a+\.\.\." is longer than 100 characters; no id is that long/);
    expect(res!.body.length).toBeLessThan(400); // the path is not echoed whole
  });

  it('an id of 100 characters is routed as usual (404 task_not_found)', async () => {
    const [res] = await raw(get(`/v1/result/${'a'.repeat(100)}`));
    expect(res!.status).toBe(404);
    expect(JSON.parse(res!.body).error.code).toBe('task_not_found');
  });
});

describe("bytes Node's HTTP parser refuses (clientErrorHandler): a whole HTTP/1.1 response, then the connection closes", () => {
  const BODY = '{"model":"pic","prompt":"a fox"}';
  const post = (headers: string, body: string) =>
    `POST /v1/pic/images HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.key}\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;

  it.each([
    [
      'Content-Length, then Transfer-Encoding',
      () => post(`Content-Length: ${BODY.length}\r\nTransfer-Encoding: chunked\r\n`, BODY),
      /both Content-Length and Transfer-Encoding; send one of them/,
    ],
    [
      'Transfer-Encoding, then Content-Length',
      () => post(`Transfer-Encoding: chunked\r\nContent-Length: ${BODY.length}\r\n`, BODY),
      /both Content-Length and Transfer-Encoding; send one of them/,
    ],
    [
      'a control byte in a header value',
      () => 'GET /v1/result/x HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n',
      /a header name or value contains a character HTTP does not allow/,
    ],
    [
      'a control byte in a header name',
      () => 'GET /v1/result/x HTTP/1.1\r\nHost: x\r\nX-N\x02ote: a\r\n\r\n',
      /a header name or value contains a character HTTP does not allow/,
    ],
    ['a request line with no valid version', () => 'GET /v1/result/x HTTP/9\r\n\r\n', /^The request is not valid HTTP\/1\.1: /],
  ])('%s: 400 malformed_http, nothing stored', async (_what, bytes, message) => {
    const before = (await countTasksByStatus(h.store.tasks)).queued;
    const [res, ...more] = await raw(bytes());
    expect(more).toEqual([]);
    expectStandardError(res!, 400, 'malformed_http', message);
    expect(res!.headers.connection).toBe('close');
    expect(res!.headers.date).toMatch(/GMT$/);
    expect((await countTasksByStatus(h.store.tasks)).queued).toBe(before);
  });

  it('a Content-Length shorter than the body, cutting it: that body is answered as invalid JSON, and the connection closed', async () => {
    const responses = await raw(post('Content-Length: 5\r\n', BODY));
    expect(responses).toHaveLength(1);
    expectStandardError(responses[0]!, 400, 'invalid_json', /not valid JSON/); // `{"mod` is all the request has
    expect(responses[0]!.headers.connection).toBe('close');
  });

  it('a body shorter than its Content-Length, then the client ends its side: 400 malformed_http', async () => {
    const responses = await raw(post('Content-Length: 100\r\n', BODY), { halfClose: true });
    expect(responses).toHaveLength(1);
    expectStandardError(
      responses[0]!,
      400,
      'malformed_http',
      /the connection ended before the whole request arrived \(a body shorter than its Content-Length\?\)/,
    );
  });

  it('a request line with garbage after it on the connection: the request is answered first, then 400 malformed_http', async () => {
    const responses = await raw(`${get('/healthz').replace('Connection: close', 'Connection: keep-alive')}\x01\x02 garbage\r\n\r\n`);
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    expectStandardError(responses[1]!, 400, 'malformed_http', /^The request is not valid HTTP\/1\.1: /);
  });

  it('a short Content-Length covering a whole body: the task it created is answered (its client must learn the id), then the error', async () => {
    const responses = await raw(post(`Content-Length: ${BODY.length}\r\n`, `${BODY}{"and":"more"}`));
    expect(responses.map((r) => r.status)).toEqual([200, 400]);
    const { id } = JSON.parse(responses[0]!.body) as { id: string };
    expect((await h.store.tasks.get(id))?.status).toBe('queued');
    expect(JSON.parse(responses[1]!.body).error.code).toBe('malformed_http');
  });

  it('bad bytes inside the body of the request being read: one 400 malformed_http at once', async () => {
    const responses = await raw(post('Transfer-Encoding: chunked\r\n', '5\r\n{"mod\r\nzz\r\n'));
    expect(responses).toHaveLength(1);
    expectStandardError(responses[0]!, 400, 'malformed_http', /a chunk size of its chunked body is not hexadecimal/);
  });

  it('headers over 16 KiB: 431 headers_too_large', async () => {
    const [res, ...more] = await raw(`GET /v1/result/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(more).toEqual([]);
    expectStandardError(res!, 431, 'headers_too_large', /larger than 16 KiB/);
    expect(res!.headers.connection).toBe('close');
  });

  it('a request that times out: 408 request_timeout (the response the handler writes)', () => {
    const err = clientError(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), { headersTimeoutMs: 7000 });
    expect(err).toMatchObject({ code: 'request_timeout', status: 408 });
    expect(err.message).toBe('The request did not arrive whole in time (headers within 7 s, the whole request within 120 s); the connection is closed');
    const text = clientErrorResponse(err, new Date(0));
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head.split('\r\n')).toEqual([
      'HTTP/1.1 408 Request Timeout',
      'Date: Thu, 01 Jan 1970 00:00:00 GMT',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ]);
    expect(JSON.parse(body)).toEqual({ error: { message: err.message, type: 'invalid_request_error', param: null, code: 'request_timeout' } });
    // Content-Length counts bytes, not characters
    const accented = clientErrorResponse(new AppError('malformed_http', 'é'));
    const accentedBody = accented.split('\r\n\r\n')[1] ?? '';
    expect(accented).toContain(`Content-Length: ${accentedBody.length + 1}\r\n`);
  });

  it('the server keeps answering afterwards', async () => {
    const [res] = await raw(get('/healthz'));
    expect(res!.status).toBe(200);
  });
});

describe('requests arriving while the server closes', () => {
  it("a request on an open connection after close began: 503 service_unavailable in the route's family body, then the connection closes", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let called!: () => void;
    const calledOnce = new Promise<void>((r) => {
      called = r;
    });
    const gated: ChatProvider = {
      id: 'gated',
      async complete() {
        called();
        await released;
        return { content: 'done', finishReason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
      },
      stream() {
        throw new Error('not used');
      },
    };
    const g = await createHarness({ workers: false, chatProviders: [gated], chatRoutes: { '*': 'gated' } });
    try {
      const address = new URL(await g.app.listen({ port: 0, host: '127.0.0.1' }));
      let received = 0;
      let secondReceived!: () => void;
      const second = new Promise<void>((r) => {
        secondReceived = r;
      });
      g.app.server.on('request', () => {
        if (++received === 2) secondReceived();
      });
      const chat = (n: number) => {
        const payload = JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: `call ${n}` }] });
        return `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${g.key}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n${payload}`;
      };
      const socket = net.connect(Number(address.port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      const closedSocket = new Promise<void>((r) => socket.on('close', () => r()));
      socket.write(chat(1));
      await within(calledOnce, 10_000, 'the first call to reach the provider');
      const closing = g.app.close();
      await new Promise((r) => setImmediate(r)); // the close has begun (preClose ran)
      socket.write(chat(2));
      await within(second, 10_000, 'the second request to be read'); // while the first still runs...
      release(); // ...and only then does the first finish
      await within(closedSocket, 10_000, 'the server to close the connection');
      await closing;
      const responses = parseResponses(Buffer.concat(chunks));
      expect(responses.map((r) => r.status)).toEqual([200, 503]);
      expect(JSON.parse(responses[1]!.body)).toEqual({ code: '503', msg: expect.stringMatching(/shutting down/), data: null, success: false });
      expect(responses[1]!.headers.connection).toBe('close');
    } finally {
      release();
      await g.close();
    }
  });
});
