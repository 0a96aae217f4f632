/**
 * A server-sent-events writer on a raw Node response: data-only events written (and so flushed) at
 * once, backpressure respected, `: ping` comments while nothing else is written.
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
  private closed = false;

  /**
   * Sends the status line and headers at once (`extraHeaders` e.g. x-request-id) and starts the
   * heartbeat: a `: ping` comment whenever `heartbeatMs` pass without another write.
   */
  constructor(private readonly res: ServerResponse, heartbeatMs: number, extraHeaders: Record<string, string | number | string[]> = {}) {
    if (typeof res.socket?.setNoDelay === 'function') res.socket.setNoDelay(true);
    res.writeHead(200, { ...extraHeaders, ...SSE_HEADERS });
    res.flushHeaders();
    res.once('close', () => this.stop());
    if (heartbeatMs > 0) {
      this.heartbeat = setInterval(() => { if (!this.closed && !res.writableNeedDrain) res.write(': ping\n\n'); }, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /** True once the connection is gone or the stream was ended. */
  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** One `data: <json>` event; resolves when the socket can take more (after 'drain' if needed). */
  async send(data: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** The `data: [DONE]` terminator, then the end of the response. */
  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    this.end();
  }

  end(): void {
    this.stop();
    if (!this.res.writableEnded) this.res.end();
  }

  private async write(text: string): Promise<void> {
    if (this.isClosed) return;
    this.heartbeat?.refresh();
    if (this.res.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => { this.res.off('drain', done); this.res.off('close', done); resolve(); };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  private stop(): void {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
