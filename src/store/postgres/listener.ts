import pg from 'pg';
import type { Logger } from 'pino';
import { clientConfig } from './connect.js';
import { CANCEL_CHANNEL, QUEUE_CHANNEL, TASKS_CHANNEL } from './migrations.js';

/** Waits between attempts to get the LISTEN connection back: doubling from the first, up to the last. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface ListenerEvents {
  /** A task written by another store instance (another process, the CLI, psql) was committed. */
  taskChanged(id: string): void;
  /** A task of this provider may be claimed now (queued, or a check waiting), by any instance's write. */
  queueChanged(provider: string): void;
  /** A task was cancelled, by any instance (its own included: the worker may run elsewhere). */
  cancelled(id: string): void;
  /**
   * The LISTEN connection was (re-)established after a loss: notifications sent meanwhile are gone,
   * so whatever waits for one should look again.
   */
  resumed(): void;
}

/**
 * The store's one dedicated LISTEN connection (a pooled connection cannot listen: it is handed to
 * other queries). Lost connections are re-established with a backoff, listening again on every
 * channel, and reported through `resumed`. Notifications of this store instance's own writes are
 * dropped here: the store tells its watchers about them at once, before the commit's echo arrives.
 */
export class ChangeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly ownPrefix: string;

  constructor(
    private readonly url: string,
    private readonly instanceId: string,
    private readonly events: ListenerEvents,
    private readonly log?: Logger,
  ) {
    this.ownPrefix = `${instanceId} `;
  }

  /** Connects and listens; rejects when the first connection fails (later losses are retried). */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(clientConfig(this.url, this.instanceId));
    client.on('notification', (msg) => this.dispatch(msg));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, undefined));
    await client.connect();
    try {
      await client.query(`LISTEN ${TASKS_CHANNEL}; LISTEN ${QUEUE_CHANNEL}; LISTEN ${CANCEL_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
  }

  private dispatch(msg: pg.Notification): void {
    const payload = msg.payload ?? '';
    if (msg.channel === QUEUE_CHANNEL) {
      this.events.queueChanged(payload);
    } else if (msg.channel === CANCEL_CHANNEL) {
      this.events.cancelled(payload);
    } else if (msg.channel === TASKS_CHANNEL && !payload.startsWith(this.ownPrefix)) {
      const space = payload.indexOf(' ');
      this.events.taskChanged(space < 0 ? payload : payload.slice(space + 1));
    }
  }

  /** The connection broke (or ended): try again after the backoff, unless the store is closing. */
  private lost(client: pg.Client, err: Error | undefined): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.log?.warn({ err }, 'PostgreSQL LISTEN connection lost: reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().then(
        () => {
          if (this.closed) return;
          this.log?.info('PostgreSQL LISTEN connection re-established');
          this.events.resumed();
        },
        (err: unknown) => {
          this.log?.warn({ err }, 'PostgreSQL LISTEN connection: reconnect failed');
          this.scheduleReconnect();
        },
      );
    }, wait);
    this.retryTimer.unref();
  }
}
