/**
 * A webhook receiver on 127.0.0.1 (port 0) that answers each POST as scripted (a status, or
 * `hang`: no answer until it closes) and keeps what it received (headers, raw body). Test-only.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptedAnswer = number | 'hang' | { status: number; headers: Record<string, string> };

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ScriptedReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  received: Received[];
  /** Answers of the next requests, in order; once used up, 200. */
  script: ScriptedAnswer[];
  close(): Promise<void>;
}

export async function startScriptedReceiver(script: ScriptedAnswer[] = [], port = 0): Promise<ScriptedReceiver> {
  const received: Received[] = [];
  const state = { script };
  const server = http.createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
    const answer = state.script.shift() ?? 200;
    if (answer === 'hang') return;
    if (typeof answer === 'number') {
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer >= 400 ? `receiver says ${answer}`.repeat(100) : 'ok');
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end();
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const actual = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${actual}`,
    port: actual,
    received,
    get script() {
      return state.script;
    },
    set script(s) {
      state.script = s;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
