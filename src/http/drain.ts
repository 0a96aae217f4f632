/**
 * The HTTP side of a graceful shutdown (G341). Node's own `server.close()` stops listening and at
 * once destroys every idle keep-alive connection: a client that was just sending its next request
 * on one sees the connection reset, the request unanswered. A drain instead:
 * - stops listening (new connections are refused: a load balancer or client goes elsewhere);
 * - keeps the open connections, and answers every request that still arrives on one as usual,
 *   with `Connection: close`, so its client opens its next connection elsewhere;
 * - closes the connection of a reply already under way when that reply ends: with
 *   `Connection: close` when its headers are not yet out, else right after its last byte;
 * - at its end ({@link HttpDrain.closeIdle}), closes the connections still idle: their clients sent
 *   nothing during the whole drain.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net from 'node:net';

export class HttpDrain {
  private draining = false;
  /** Replies under way (only counted while not draining; a drain reads them once). */
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly server: Server) {
    // first: a reply made while draining must know it before anything writes its headers
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => this.onRequest(res));
  }

  /** Whether the drain has begun. */
  get active(): boolean {
    return this.draining;
  }

  private onRequest(res: ServerResponse): void {
    if (this.draining) {
      res.shouldKeepAlive = false; // Node writes `Connection: close` and closes after the reply
      return;
    }
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
  }

  /** Stops listening; from now on every reply closes its connection (idle connections stay open). */
  start(): void {
    if (this.draining) return;
    this.draining = true;
    // net's close, not http's: http's also destroys the idle keep-alive connections at once
    if (this.server.listening) net.Server.prototype.close.call(this.server);
    for (const res of this.open) {
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
        continue;
      }
      // headers went out saying keep-alive (a stream, a long download): close after the last byte
      const socket = res.socket;
      if (socket) res.once('finish', () => socket.destroySoon());
    }
    this.open.clear();
  }

  /** The end of the drain: closes the connections that are idle now (those with a reply under way close after it). */
  closeIdle(): void {
    this.server.closeIdleConnections();
  }

  /** Past the grace period: closes every connection, replies under way included. */
  closeAll(): void {
    this.server.closeAllConnections();
  }
}
