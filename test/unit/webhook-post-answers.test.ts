/**
 * What one webhook POST makes of a receiver's answer whose body is slow to come (G211): the status
 * line is the answer. A 2xx delivers at once, whatever its body does afterwards; a failed status
 * whose body never ends is recorded with that status and the part of the body that came, when the
 * attempt's time bound ends (not as "no answer", with no status).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhooks/post.js';

describe('webhook POST: answers whose body never ends', () => {
  let server: http.Server;
  let origin: string;
  const open = new Set<http.ServerResponse>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // the status line and a first piece of the body, then nothing more, the connection held open
        res.writeHead(req.url === '/accepted' ? 200 : 503, { 'content-type': 'text/plain' });
        res.write(req.url === '/accepted' ? 'ok' : 'busy');
        open.add(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of open) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string) =>
    postWebhook(`${origin}${path}`, { 'content-type': 'application/json' }, '{"status":"completed"}', { timeoutMs: 1000, allowPrivate: true });

  it('a 2xx delivers, though its body never ends', async () => {
    expect(await post('/accepted')).toEqual({ statusCode: 200, error: null });
  });

  it('a 503 whose body never ends is a failed attempt with its status and the excerpt that came', async () => {
    expect(await post('/busy')).toEqual({ statusCode: 503, error: 'HTTP 503: busy', failure: 'status' });
  });
});
