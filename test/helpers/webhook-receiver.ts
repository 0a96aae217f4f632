/**
 * A webhook receiver on 127.0.0.1 (port 0) that keeps every POST (headers, raw body) and answers
 * 200: where a test points an official client's webhook to see what a fake upstream sends. Test-only.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(parts) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
