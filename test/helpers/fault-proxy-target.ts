/**
 * For the fault proxy's own tests (test/gateway/store-agnostic/fault-proxy.test.ts): a tiny target server, and one raw
 * HTTP request per fresh connection whose failure keeps the socket error's code.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request on a fresh connection; rejects with the socket error (its `code`) when there is no answer. */
export function send(url: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'GET', headers: o.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The socket error code of a request that got no answer, or 'answered'. */
export const errorCode = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'answered',
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );

/** The target: `/echo` answers what it got; `POST /tasks` creates; `/task/:status` answers a task; `/sse` streams behind gates. */
export interface Target {
  url: string;
  created: number;
  seen: string[];
  /** Each call opens the gate of the next SSE event. */
  sseGates: Array<() => void>;
  close(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const target: Target = { url: '', created: 0, seen: [], sseGates: [], close: async () => undefined };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = req.url ?? '/';
    target.seen.push(`${req.method} ${url}`);
    if (url.startsWith('/echo')) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-target': 'yes' });
      res.end(JSON.stringify({ method: req.method, url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }));
    } else if (url === '/tasks' && req.method === 'POST') {
      target.created++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `t${target.created}`, status: 'queued' }));
    } else if (url.startsWith('/task/')) {
      const status = url.slice('/task/'.length);
      const done = status === 'completed';
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ id: 't1', status, video_url: done ? `${target.url}/files/t1.mp4` : null, image_url: null, progress: done ? 100 : 40 }));
    } else if (url === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      for (let i = 1; i <= 3; i++) {
        await new Promise<void>((open) => target.sseGates.push(open));
        res.write(`data: ${i}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  target.close = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  return target;
}
