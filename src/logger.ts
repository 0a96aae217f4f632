import pino, { type Logger } from 'pino';

/** Header and field names whose values never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization',
  'authorization', 'apiKey', 'secret', 'key.secret', 'config.bootstrapKey', 'config.signingSecret',
];

/** JSON logs to stdout (or `destination`), secrets redacted. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'mediagate' } }, destination);
}
