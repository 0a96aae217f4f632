import pino, { type Logger } from 'pino';

/** Header and field names whose values never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization',
  'authorization', 'apiKey', 'secret', 'key.secret', 'config.bootstrapKey', 'config.signingSecret',
];

/**
 * JSON logs, secrets redacted. By default to stdout, written asynchronously (a request never waits
 * for its log line; pino flushes what is buffered when the process exits, a `kill -9` can lose the
 * last lines). `destination` replaces stdout (tests).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'mediagate' } };
  if (destination) return pino(options, destination);
  if (level === 'silent') return pino(options);
  return pino(options, pino.destination({ dest: 1, sync: false }));
}
