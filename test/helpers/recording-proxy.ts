/**
 * An HTTP proxy in front of an upstream (another mediagate in the relay tests): forwards every
 * request to `target` and streams the answer back as it comes (SSE included), recording what it
 * saw (method, path, headers, body). `intercept` may answer a request itself instead (fault
 * injection). Test-only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The upstream's status, once it answered (undefined when intercepted or failed). */
  status?: number;
  /** The upstream's whole answer, once it ended, and its headers. */
  response?: string;
  responseHeaders?: http.IncomingHttpHeaders;
}

export interface RecordingProxy {
  origin: string;
  /** Where requests go, e.g. `http://127.0.0.1:1234`; set before the first request. */
  target: string | undefined;
  requests: RecordedRequest[];
  /** Answers a request itself when it returns true (it must then end `res`). */
  intercept: ((req: RecordedRequest, res: http.ServerResponse) => boolean) | undefined;
  close(): Promise<void>;
}

export async function startRecordingProxy(): Promise<RecordingProxy> {
  const proxy: RecordingProxy = { origin: '', target: undefined, requests: [], intercept: undefined, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rec: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: body.toString('utf8') };
      proxy.requests.push(rec);
      if (proxy.intercept?.(rec, res)) return;
      if (!proxy.target) { res.writeHead(502).end('no target'); return; }
      const headers = { ...req.headers, host: new URL(proxy.target).host };
      const out = http.request(`${proxy.target}${rec.path}`, { method: rec.method, headers }, (up) => {
        rec.status = up.statusCode;
        rec.responseHeaders = up.headers;
        res.writeHead(up.statusCode ?? 502, up.headers);
        res.flushHeaders();
        const answer: Buffer[] = [];
        up.on('data', (c: Buffer) => { answer.push(c); res.write(c); });
        up.on('end', () => { rec.response = Buffer.concat(answer).toString('utf8'); res.end(); });
        up.on('error', () => res.destroy());
      });
      out.on('error', () => { if (!res.headersSent) res.writeHead(502).end('upstream unreachable'); else res.destroy(); });
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return proxy;
}
