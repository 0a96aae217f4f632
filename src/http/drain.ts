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

/** An open connection, in the drain's list: its socket, and its latest reply under way, or null between replies. */
interface Connection {
  socket: Socket;
  reply: ServerResponse | null;
  prev: Connection | null;
  next: Connection | null;
}

/** Where a socket keeps its {@link Connection}. */
const CONNECTION = Symbol('mediagate.drain.connection');
type TrackedSocket = Socket & { [CONNECTION]?: Connection };

export class HttpDrain {
  private draining = false;
  /**
   * The open connections, each with its reply under way (G426): a list linked through the
   * connections themselves, so a request only sets its connection's reply, and a connection
   * links and unlinks itself once. No hash table gains and loses an entry per request or per
   * connection: a Set that did kept the replies it had held alive until V8's next full collection
   * (its obsolete tables still point at them), which tripled the cost of garbage collection per request.
   */
  private first: Connection | null = null;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: TrackedSocket) => {
      const c: Connection = { socket, reply: null, prev: null, next: this.first };
      if (this.first) this.first.prev = c;
      this.first = c;
      socket[CONNECTION] = c;
      socket.once('close', () => this.unlink(c));
    });
    // first: a reply made while draining must know it before anything writes its headers
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.onRequest(req, res));
  }

  /** How many connections are open now. */
  get openConnections(): number {
    let n = 0;
    for (let c = this.first; c; c = c.next) n++;
    return n;
  }

  /** How many connections have a reply under way now (pipelined replies on one connection count once; 0 once the drain has begun). */
  get repliesUnderWay(): number {
    let n = 0;
    for (let c = this.first; c; c = c.next) if (c.reply) n++;
    return n;
  }

  /** Whether the drain has begun. */
  get active(): boolean {
    return this.draining;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    // the request's connection (plain HTTP: the socket of its 'connection' event); none for a request injected without one
    const c = (req.socket as TrackedSocket | undefined)?.[CONNECTION];
    if (this.draining) {
      res.shouldKeepAlive = false; // Node writes `Connection: close` and closes after the reply
      if (c) c.reply = res; // a later reply on a streaming one's connection: it closes the connection (see start)
      return;
    }
    if (!c) return;
    // the latest reply: a pipelined one is answered after those before it, so it speaks for the connection
    c.reply = res;
    // a finished reply is let go of at once: an idle connection holds none
    res.once('finish', () => {
      if (c.reply === res) c.reply = null;
    });
  }

  private unlink(c: Connection): void {
    if (c.prev) c.prev.next = c.next;
    else if (this.first === c) this.first = c.next;
    if (c.next) c.next.prev = c.prev;
    c.prev = null;
    c.next = null;
    c.reply = null;
  }

  /** Stops listening; from now on every reply closes its connection (idle connections stay open). */
  start(): void {
    if (this.draining) return;
    this.draining = true;
    // net's close, not http's: http's also destroys the idle keep-alive connections at once
    if (this.server.listening) net.Server.prototype.close.call(this.server);
    for (let c = this.first; c; c = c.next) {
      const res = c.reply;
      if (!res || res.writableFinished) continue; // an idle connection: closed at the end of the drain
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
        continue;
      }
      // headers made saying keep-alive (a stream, a long download, a pipelined reply waiting its
      // turn): close after the last byte, unless a request sent meanwhile has a reply of its own,
      // which closes the connection after it
      const connection = c;
      res.once('finish', () => {
        // null: its own 'finish' listener (registered first) let go of it, and no request came since
        if (connection.reply === null || connection.reply === res) connection.socket.destroySoon();
      });
    }
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
