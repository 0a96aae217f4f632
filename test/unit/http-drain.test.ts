/**
 * The HTTP drain (G341, G426) on a plain Node server: at its start, a reply whose headers are not
 * out yet says `Connection: close`, a reply already streaming closes its connection after its last
 * byte, an idle kept-alive connection stays open (a request on it is answered with `Connection:
 * close`) until the drain's end closes the idle ones. What it keeps is one entry per connection.
 */
import http, { type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpDrain } from '../../src/http/drain.js';
import { type HttpReply, httpCall } from '../helpers/http-client.js';

const closed = (socket: Socket): Promise<void> => (socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve())));

let server: http.Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/**
 * A server with a drain: `/quick` is answered at once, `/streaming` sends its headers and a first
 * chunk, every other path waits; the replies not ended are in `held`. `arrival(path)` resolves once
 * a request for `path` has come in.
 */
async function holdingServer(): Promise<{ drain: HttpDrain; port: number; held: Map<string, ServerResponse>; arrival: (path: string) => Promise<void> }> {
  const held = new Map<string, ServerResponse>();
  const waiters = new Map<string, () => void>();
  const seen = new Set<string>();
  server = http.createServer((req, res) => {
    const url = req.url!;
    if (url === '/streaming') res.writeHead(200, { 'content-type': 'text/plain' }).write('first ');
    if (url === '/quick') res.end('quick');
    else held.set(url, res);
    seen.add(url);
    waiters.get(url)?.();
  });
  const drain = new HttpDrain(server);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const arrival = (path: string): Promise<void> => (seen.has(path) ? Promise.resolve() : new Promise((resolve) => waiters.set(path, resolve)));
  return { drain, port: (server.address() as AddressInfo).port, held, arrival };
}

/** A GET on `agent`'s one kept-alive connection; `onChunk` is told each piece of the body. */
const get = (agent: http.Agent, port: number, path: string, onChunk?: (text: string) => void): Promise<HttpReply> =>
  httpCall(`http://127.0.0.1:${port}${path}`, { agent, ...(onChunk && { onChunk }) });

describe('the HTTP drain (G341, G426)', () => {
  it('closes each connection after its reply under way, keeps idle ones until its end, and answers late requests with Connection: close', async () => {
    const { drain, port, held, arrival } = await holdingServer();
    const agents = Array.from({ length: 3 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const [idleAgent, headAgent, streamAgent] = agents as [http.Agent, http.Agent, http.Agent];

    // an idle kept-alive connection: its one reply is over
    const first = await get(idleAgent, port, '/quick');
    expect(first.headers.connection).toBe('keep-alive');
    // a reply whose headers are not out, and a reply already streaming
    const waiting = get(headAgent, port, '/waiting');
    let firstChunk!: () => void;
    const headersOut = new Promise<void>((resolve) => {
      firstChunk = resolve;
    });
    const streaming = get(streamAgent, port, '/streaming', firstChunk);
    await arrival('/waiting');
    await headersOut;
    expect(drain.repliesUnderWay).toBe(2); // the idle connection's finished reply is not held
    expect(drain.openConnections).toBe(3);

    drain.start();
    expect(drain.active).toBe(true);
    expect(server?.listening).toBe(false);

    held.get('/waiting')!.end('waited');
    const waited = await waiting;
    expect([waited.status, waited.headers.connection, waited.body]).toEqual([200, 'close', 'waited']);
    await closed(waited.socket);

    held.get('/streaming')!.end('last');
    const streamed = await streaming;
    expect([streamed.headers.connection, streamed.body]).toEqual(['keep-alive', 'first last']); // said before the drain began
    await closed(streamed.socket); // closed after its last byte

    // the idle connection is still open; a request on it is answered, with Connection: close
    expect(first.socket.destroyed).toBe(false);
    const late = await get(idleAgent, port, '/quick');
    expect(late.socket).toBe(first.socket);
    expect([late.status, late.headers.connection, late.body]).toEqual([200, 'close', 'quick']);
    await closed(late.socket);
    // every connection has closed, and has left the drain's list
    await Promise.all([waited.socket, streamed.socket, late.socket].map(closed));
    await vi.waitFor(() => expect(drain.openConnections).toBe(0));
    for (const a of agents) a.destroy();
  });

  it('an idle connection is closed at the end of the drain', async () => {
    const { drain, port } = await holdingServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const reply = await get(agent, port, '/quick');
    drain.start();
    expect(reply.socket.destroyed).toBe(false);
    drain.closeIdle();
    await closed(reply.socket);
    agent.destroy();
  });

  describe('pipelined requests (two on one connection before the first is answered)', () => {
    /** A raw connection: what it has read so far, and a promise of everything it read until the server closed it. */
    function connect(port: number): { socket: net.Socket; text: () => string; closedWith: Promise<string> } {
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      const closedWith = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
      return { socket, text: () => text, closedWith };
    }
    const request = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

    it('a reply waiting behind a held one: both are answered, then the connection closes', async () => {
      const { drain, port, held, arrival } = await holdingServer();
      const client = connect(port);
      client.socket.write(request('/held') + request('/quick'));
      await arrival('/held');
      await arrival('/quick');
      drain.start();
      held.get('/held')!.end('held');
      const text = await client.closedWith; // closed by the server, not by the drain's end
      expect(text.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
      expect(text.indexOf('held')).toBeLessThan(text.lastIndexOf('quick'));
    });

    it('a request sent after the signal behind a streaming reply is answered with Connection: close, then the connection closes', async () => {
      const { drain, port, held, arrival } = await holdingServer();
      const client = connect(port);
      client.socket.write(request('/streaming'));
      await arrival('/streaming');
      await vi.waitFor(() => expect(client.text()).toContain('first '));
      drain.start();
      client.socket.write(request('/quick'));
      await arrival('/quick');
      held.get('/streaming')!.end('last');
      const text = await client.closedWith;
      const [first, second] = text.split(/(?=HTTP\/1\.1 )/);
      expect(first).toMatch(/first .*last/s);
      expect(second).toMatch(/^HTTP\/1\.1 200/);
      expect(second).toMatch(/connection: close/i);
      expect(second).toMatch(/quick$/);
    });
  });
});
