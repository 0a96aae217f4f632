import fs from 'node:fs';
import pino, { type Logger } from 'pino';

/** Header and field names whose values never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  'apiKey',
  'secret',
  'key.secret',
  'config.bootstrapKey',
  'config.signingSecret',
];

/**
 * Log lines of one event-loop turn, handed to the async stdout writer together at the end of the
 * turn: one write for the ~100 access-log lines a busy turn makes instead of one each (each write
 * costs the writer about as much as formatting three lines). At exit, lines still waiting are
 * written synchronously, after what the writer itself flushes then.
 */
class TurnBatch {
  private pending = '';
  private scheduled = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.pending;
    this.pending = '';
    this.target.write(lines);
  };

  constructor(
    private readonly target: pino.DestinationStream,
    fd: number,
  ) {
    process.once('exit', () => {
      if (this.pending) fs.writeSync(fd, this.pending);
    });
  }

  write(line: string): void {
    this.pending += line;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }
}

/**
 * JSON logs, secrets redacted. By default to stdout, written asynchronously (a request never waits
 * for its log line; what is buffered is flushed when the process exits, a `kill -9` can lose the
 * last lines). `destination` replaces stdout (tests).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'mediagate' } };
  if (destination) return pino(options, destination);
  if (level === 'silent') return pino(options);
  return pino(options, new TurnBatch(pino.destination({ dest: 1, sync: false }), 1));
}
