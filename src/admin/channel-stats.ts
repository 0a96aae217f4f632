/**
 * The channels' figures shared by every process (G322): each process adds its calls' outcomes and
 * lengths to per-minute rows of the store (batched: written every few seconds, and before a read
 * of them), and writes each change of a circuit and each channel fault's error (scrubbed) at once.
 * `GET /admin/v1/channels` thus answers for the cluster, whichever process it reaches.
 */
import type { Logger } from 'pino';
import type { UpstreamOutcome } from '../providers/channels.js';
import type { CircuitState } from '../providers/channels.js';
import type { AdminStore, ChannelMinute } from '../store/types.js';

const MINUTE_MS = 60_000;
/** Minute rows older than this are forgotten (the longest window read is the last hour). */
const KEEP_MS = 2 * 3_600_000;
/** The same error of a channel is written at most this often. */
const ERROR_EVERY_MS = 5_000;
const MAX_ERROR_CHARS = 300;

/**
 * An upstream's error as an operator may see it: no URL query strings, no bearer tokens or keys,
 * no long runs of secret-looking characters; one line, at most 300 characters.
 */
export function scrubError(message: string): string {
  return message
    .replace(/\s+/g, ' ')
    .replace(/(https?:\/\/[^\s?#"']+)\?[^\s"']*/gi, '$1?[redacted]')
    .replace(/\b(bearer|basic)\s+[^\s"',;)]+/gi, '$1 [redacted]')
    .replace(/\b(token|key|api[_-]?key|secret|password|authorization)(\s*[:=]\s*)("?)[^\s"',;)]+/gi, '$1$2$3[redacted]')
    .replace(/\b(sk|pk|rk|r8|fal|key)[-_][A-Za-z0-9_-]{8,}/g, '[redacted]')
    .replace(/\b[A-Za-z0-9_-]{32,}\b/g, '[redacted]')
    .trim()
    .slice(0, MAX_ERROR_CHARS);
}

export class ChannelStats {
  private pending = new Map<string, ChannelMinute>();
  private readonly lastError = new Map<string, { message: string; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<AdminStore, 'addChannelMinutes' | 'setChannelState' | 'setChannelError'>,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes the pending minutes every `everyMs`. */
  start(everyMs = 5_000): void {
    this.timer ??= setInterval(() => {
      void this.flush();
    }, everyMs);
    this.timer.unref();
  }

  /** A call's outcome (Channels.observe). */
  observe(channel: string, outcome: UpstreamOutcome, seconds?: number): void {
    const minute = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS;
    const key = `${channel}\n${minute}`;
    let row = this.pending.get(key);
    if (!row) {
      row = { channel, minute, ok: 0, faults: 0, errors: 0, refused: 0, callsTimed: 0, seconds: 0 };
      this.pending.set(key, row);
    }
    if (outcome === 'ok') row.ok++;
    else if (outcome === 'fault') row.faults++;
    else if (outcome === 'error') row.errors++;
    else row.refused++;
    if (seconds !== undefined) {
      row.callsTimed++;
      row.seconds += seconds;
    }
  }

  stateChanged(channel: string, state: CircuitState, at: number): void {
    this.store.setChannelState(channel, state, at).catch((err: unknown) => this.log.warn({ err, channel }, "could not record a channel's circuit state"));
  }

  fault(channel: string, err: unknown, at: number): void {
    const message = scrubError(err instanceof Error ? err.message : String(err));
    const last = this.lastError.get(channel);
    if (last?.message === message && at - last.at < ERROR_EVERY_MS) return;
    this.lastError.set(channel, { message, at });
    this.store.setChannelError(channel, message, at).catch((e: unknown) => this.log.warn({ err: e, channel }, "could not record a channel's last error"));
  }

  /** Writes the pending minutes (one at a time; a failed write keeps them for the next). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const rows = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.store.addChannelMinutes(rows, this.now() - KEEP_MS);
      } catch (err) {
        this.log.warn({ err }, "could not write the channels' outcomes; kept for the next try");
        for (const r of rows) {
          const key = `${r.channel}\n${r.minute}`;
          const now = this.pending.get(key);
          if (!now) this.pending.set(key, r);
          else
            Object.assign(now, {
              ok: now.ok + r.ok,
              faults: now.faults + r.faults,
              errors: now.errors + r.errors,
              refused: now.refused + r.refused,
              callsTimed: now.callsTimed + r.callsTimed,
              seconds: now.seconds + r.seconds,
            });
        }
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
