/**
 * The one place that says whether a store error means "the database cannot be reached now" (G256):
 * a refused or dropped connection, a backend terminated by an operator or a restart, a server
 * shutting down or not yet accepting connections, a pool that could not connect in time, SQLite
 * busy past its timeout. Such an error is the server's fault and passes: requests answer 503
 * `service_unavailable` with `Retry-After`, workers wait and write again, nothing uses an attempt.
 * Anything else (a constraint, a syntax error, a bug) is not classified here and stays a 500.
 */

/** Seconds a caller is told to wait before retrying a request the store could not serve. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** Node's socket errors of a connection that cannot be made or was lost. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'EHOSTDOWN',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve the session: class 08 (connection exception),
 * admin/crash shutdown and "cannot connect now" (57P01-57P03), an idle session timed out (57P05),
 * too many connections (53300), a database being dropped or recovering (57P04 is "database dropped",
 * not passing: left out).
 */
const PG_STATES = new Set(['57P01', '57P02', '57P03', '57P05', '53300']);

/**
 * node-postgres' own messages for a connection that is gone or never came (it gives them no code).
 * "timeout expired" is the client's connect bound (connectionTimeoutMillis on the client, which is
 * where the store sets it: connect.ts), the error a host that takes the connection and never answers
 * (a partition, a hung server) gives; pg-pool's own bound would say "Connection terminated due to
 * connection timeout".
 */
const PG_MESSAGES = [
  /^Connection terminated/,
  // a statement past the pool's query bound (G451): the host keeps the connection and does not answer
  /^Query read timeout$/,
  /^timeout expired$/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Cannot use a pool after calling end on the pool/,
];

/** SQLite: another connection held the database past the busy timeout, or the file cannot be read now. */
const SQLITE_CODES = [/^SQLITE_BUSY/, /^SQLITE_IOERR/, /^SQLITE_CANTOPEN/, /^SQLITE_PROTOCOL/];

/** Whether `err` (or an error it wraps) says the store cannot be reached now. */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || PG_STATES.has(code) || code.startsWith('08')) return true;
      if (SQLITE_CODES.some((re) => re.test(code))) return true;
    }
    if (PG_MESSAGES.some((re) => re.test(e.message))) return true;
    // an AggregateError (a connect to every address of a name failed) holds the causes in `errors`
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.length > 0 && inner.every((x) => isStoreUnavailable(x))) return true;
  }
  return false;
}

/**
 * PostgreSQL SQLSTATEs of a server that refuses the connection the settings describe (G477):
 * class 28 (the user or password), 3D000 (no such database), 42501 (the role lacks a right:
 * CONNECT, CREATE), 53300 (too many connections), 57P03 (not accepting connections yet), class 08.
 */
const REFUSAL_STATES = /^(28...|3D000|42501|53300|57P03|08...)$/;
/** node-postgres' own errors of a connection the settings cannot make (they carry no code). */
const CLIENT_REFUSALS = /^(The server does not support SSL connections|SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string)$/;

/**
 * Whether `err` is a refusal of the connection the settings describe ("database "x" does not
 * exist", "password authentication failed", "The server does not support SSL connections"): a
 * setting to correct, which its message says whole. Any other server error (a migration that
 * failed: a bug) is not one.
 */
export function isConnectionRefusal(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { severity, code } = err as { severity?: unknown; code?: unknown };
  if (typeof severity === 'string' && typeof code === 'string') return REFUSAL_STATES.test(code);
  return code === undefined && CLIENT_REFUSALS.test(err.message);
}
