/**
 * Plain node:http calls for tests that look at connections themselves (graceful shutdown, G341):
 * whether a request went out on a kept-alive connection, what `Connection` the reply said, and
 * whether the connection ended cleanly or was reset. Test-only.
 */
import http from 'node:http';
import type { Socket } from 'node:net';

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The request went out on a connection kept alive from an earlier one. */
  reusedSocket: boolean;
  /** The connection it went out on (to see whether the server closes it). */
  socket: Socket;
}

export interface HttpCall {
  method?: string;
  key?: string;
  json?: unknown;
  headers?: Record<string, string>;
  agent?: http.Agent;
  /** Called with each chunk of the body as it arrives (streams). */
  onChunk?: (text: string) => void;
}

/**
 * One request; resolves with the whole reply once its body ended, rejects when the connection
 * failed (refused, reset, closed before the reply ended): the error's `code` says which.
 */
export function httpCall(url: string, call: HttpCall = {}): Promise<HttpReply> {
  const body = call.json === undefined ? undefined : JSON.stringify(call.json);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: call.method ?? (body === undefined ? 'GET' : 'POST'),
        agent: call.agent ?? false,
        headers: {
          ...(call.key && { authorization: `Bearer ${call.key}` }),
          ...(body !== undefined && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
          ...call.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          call.onChunk?.(chunk);
        });
        res.on('error', reject);
        res.on('aborted', () => reject(Object.assign(new Error('the reply was cut short'), { code: 'ECONNRESET' })));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, reusedSocket: req.reusedSocket, socket: req.socket! }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
