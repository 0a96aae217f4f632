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
import net, { type Socket } from 'node:net';

export class HttpDrain {
  private draining = false;
  /**
   * Each open connection's reply under way, or null between replies (only kept while not draining;
   * a drain reads them once). An entry per connection, not per request: a Set that gains and loses
   * every reply keeps the replies it held alive until V8's next full collection (its obsolete hash
   * tables still point at them), which tripled the cost of garbage collection per request (G426).
   */
  private readonly latest = new Map<Socket, ServerResponse | null>();

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => socket.once('close', () => this.latest.delete(socket)));
    // first: a reply made while draining must know it before anything writes its headers
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.onRequest(req, res));
  }

  /** How many replies are under way now (before the drain; 0 once it has begun). */
  get repliesUnderWay(): number {
    let n = 0;
    for (const res of this.latest.values()) if (res) n++;
    return n;
  }

  /** Whether the drain has begun. */
  get active(): boolean {
    return this.draining;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (this.draining) {
      res.shouldKeepAlive = false; // Node writes `Connection: close` and closes after the reply
      return;
    }
    // the request's socket (a pipelined reply has none yet); the entry is overwritten, never
    // deleted and added again, and a finished reply is let go of at once (an idle connection holds none)
    const socket = req.socket;
    this.latest.set(socket, res);
    res.once('finish', () => {
      if (this.latest.get(socket) === res) this.latest.set(socket, null);
    });
  }

  /** Stops listening; from now on every reply closes its connection (idle connections stay open). */
  start(): void {
    if (this.draining) return;
    this.draining = true;
    // net's close, not http's: http's also destroys the idle keep-alive connections at once
    if (this.server.listening) net.Server.prototype.close.call(this.server);
    for (const res of this.latest.values()) {
      if (!res || res.writableFinished) continue; // an idle connection: closed at the end of the drain
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
        continue;
      }
      // headers went out saying keep-alive (a stream, a long download): close after the last byte
      const socket = res.socket;
      if (socket) res.once('finish', () => socket.destroySoon());
    }
    this.latest.clear();
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
