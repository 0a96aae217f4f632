/**
 * A server-sent-events writer on a raw Node response: data-only events written (and so flushed) at
 * once, backpressure respected, `: ping` comments while nothing else is written. The status line
 * and headers leave with the first write, and events can be held for the next one (`hold`), so the
 * first content token reaches the client in one TCP segment with everything before it.
 */
import type { ServerResponse } from 'node:http';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export class SseWriter {
  private heartbeat: NodeJS.Timeout | undefined;
  private flushing: NodeJS.Immediate | undefined;
  private closed = false;
  /** Events held for the next write. */
  private held = '';

  /**
   * Sets the status line and headers (`extraHeaders` e.g. x-request-id; they are sent with the
   * first write) and starts the heartbeat: a `: ping` comment whenever `heartbeatMs` pass without
   * another write.
   */
  constructor(
    private readonly res: ServerResponse,
    heartbeatMs: number,
    extraHeaders: Record<string, string | number | string[]> = {},
  ) {
    if (typeof res.socket?.setNoDelay === 'function') res.socket.setNoDelay(true);
    res.writeHead(200, { ...extraHeaders, ...SSE_HEADERS });
    res.once('close', () => this.stop());
    if (heartbeatMs > 0) {
      this.heartbeat = setInterval(() => {
        if (!this.closed && !res.writableNeedDrain) void this.ping();
      }, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /** True once the connection is gone or the stream was ended. */
  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** One `data: <json>` event; resolves when the socket can take more (after 'drain' if needed). */
  async send(data: unknown): Promise<void> {
    await this.sendJson(JSON.stringify(data));
  }

  /**
   * One `data: <json text>` event. Returns undefined when the socket took it, or a promise that
   * resolves on 'drain' (the hot path awaits only then: no extra turn per token).
   */
  sendJson(json: string): Promise<void> | undefined {
    return this.write(`data: ${json}\n\n`);
  }

  /** One event of JSON text with an `id:` and (absent: the default `message`) an `event:` name. */
  sendEvent(json: string, id: number | undefined, event?: string): Promise<void> | undefined {
    return this.write(`${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}data: ${json}\n\n`);
  }

  /** An `id:` line alone: no event is dispatched, but EventSource sends it back as `Last-Event-ID` when it reconnects. */
  sendId(id: string): Promise<void> | undefined {
    return this.write(`id: ${id}\n\n`);
  }

  /** One `data: <json text>` event, written with the next write (send, ping, done). */
  holdJson(json: string): void {
    this.held += `data: ${json}\n\n`;
  }

  /**
   * Writes what is held at the end of this event-loop turn unless another write takes it first:
   * work already waiting (other requests) goes before it, and a write in between carries it.
   */
  flushSoon(): void {
    if (this.flushing) return;
    this.flushing = setImmediate(() => {
      this.flushing = undefined;
      if (this.held) void this.write('');
    });
  }

  /** A `: ping` comment (with any held events): sends the headers now if nothing else has. */
  async ping(): Promise<void> {
    await this.write(': ping\n\n');
  }

  /** The `data: [DONE]` terminator, then the end of the response. */
  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    this.end();
  }

  end(): void {
    this.stop();
    if (!this.res.writableEnded) {
      const held = this.held;
      this.held = '';
      if (held && !this.res.destroyed) this.res.end(held);
      else this.res.end();
    }
  }

  private write(text: string): Promise<void> | undefined {
    if (this.isClosed) return undefined;
    this.heartbeat?.refresh();
    if (this.held) {
      text = this.held + text;
      this.held = '';
    }
    if (this.res.write(text)) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  private stop(): void {
    this.closed = true;
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
