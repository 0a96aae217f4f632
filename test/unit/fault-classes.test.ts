/**
 * G256, G260: store and storage errors are classified in one place each, and a request that meets
 * either answers 503 `service_unavailable` with `Retry-After`, its message naming no host, port,
 * bucket or path. Errors that are not the database's or the bucket's reachability stay 500.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { asAppError } from '../../src/errors.js';
import { S3StorageError } from '../../src/media/s3-storage-error.js';
import { isStorageUnavailable } from '../../src/media/storage-faults.js';
import { isConnectionRefusal, isStoreUnavailable } from '../../src/store/faults.js';
import { createPool } from '../../src/store/postgres/connect.js';
import { failureMessage } from '../../src/tasks/backoff.js';

const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

/** node-postgres' DatabaseError: a severity and a SQLSTATE. */
const serverError = (message: string, code: string): Error => Object.assign(new Error(message), { severity: 'FATAL', code });

describe('isConnectionRefusal (G477): a refusal of the connection the settings describe', () => {
  it.each([
    ['no such database', serverError('database "x" does not exist', '3D000')],
    ['a wrong password', serverError('password authentication failed for user "ops"', '28P01')],
    ['a role without CONNECT', serverError('permission denied for database x', '42501')],
    ['too many connections', serverError('sorry, too many clients already', '53300')],
    ['a server starting up', serverError('the database system is starting up', '57P03')],
    ['no SSL where sslmode=require asks for it', new Error('The server does not support SSL connections')],
  ])('%s', (_what, err) => {
    expect(isConnectionRefusal(err)).toBe(true);
  });

  it.each([
    ['a migration meeting a stray table', serverError('relation "tasks" already exists', '42P07')],
    ['a constraint', serverError('duplicate key value violates unique constraint', '23505')],
    ['a system error (said by G472 instead)', coded('connect ECONNREFUSED 10.0.0.7:5432', 'ECONNREFUSED')],
    ['a bug', new TypeError('x is undefined')],
    ['not an error', 'database "x" does not exist'],
  ])('not %s', (_what, err) => {
    expect(isConnectionRefusal(err)).toBe(false);
  });
});

describe('isStoreUnavailable', () => {
  it.each([
    ['a refused connection', coded('connect ECONNREFUSED 10.0.0.7:5432', 'ECONNREFUSED')],
    ['a reset connection', coded('read ECONNRESET', 'ECONNRESET')],
    ['pg: a connection that ended', new Error('Connection terminated unexpectedly')],
    ['pg: a connect that timed out', new Error('Connection terminated due to connection timeout')],
    ["pg: the client's connect bound", new Error('timeout expired')],
    ['pg: a client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['pg: a terminated backend (57P01)', coded('terminating connection due to administrator command', '57P01')],
    ['pg: a server starting up (57P03)', coded('the database system is starting up', '57P03')],
    ['pg: an idle session timed out (57P05)', coded('terminating connection due to idle-session timeout', '57P05')],
    ['pg: too many connections (53300)', coded('sorry, too many clients already', '53300')],
    ['pg: a connection exception (08006)', coded('connection failure', '08006')],
    ['SQLite busy past its timeout', coded('database is locked', 'SQLITE_BUSY')],
    ['a cause two levels down', new Error('insert failed', { cause: new Error('batch failed', { cause: new Error('Connection terminated unexpectedly') }) })],
    ['every address of a name refused', Object.assign(new AggregateError([coded('a', 'ECONNREFUSED'), coded('b', 'ECONNREFUSED')], ''), {})],
  ])('%s: unavailable', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', coded('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', coded('syntax error at or near "SELEC"', '42601')],
    ['a serialization failure', coded('could not serialize access', '40001')],
    ['SQLite: a constraint', coded('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'Connection terminated unexpectedly'],
  ])('%s: not unavailable', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
  });
});

describe("the store's pool and a database host that never answers", () => {
  // A partition or a hung server: the host takes the connection and says nothing. The store bounds
  // the connect on the client (connect.ts), whose error is what requests and workers meet: it must
  // be the database unreachable (a 503, a worker's patient write), not a bug (a 500, an attempt used).
  it("the pool's error is the database unreachable: 503 with Retry-After", async () => {
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => {
      held.push(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const pool = createPool({ url: `postgres://mediagate@127.0.0.1:${port}/mediagate`, poolSize: 1, connectTimeoutMs: 300 }, 'fault-classes');
    try {
      const err = await pool.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(held.length).toBeGreaterThan(0); // the host was reached and kept silent
      expect(isStoreUnavailable(err)).toBe(true);
      const reply = asAppError(err);
      expect(reply.code).toBe('service_unavailable');
      expect(reply.status).toBe(503);
      expect(Number(reply.headers?.['retry-after'])).toBeGreaterThan(0);
      expect(reply.message).not.toContain(String(port));
    } finally {
      for (const s of held) s.destroy();
      await pool.end().catch(() => undefined);
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('isStorageUnavailable', () => {
  const s3 = (code: string, status: number | undefined): S3StorageError =>
    new S3StorageError('upload', 's3://private-bucket/results/t/x.png', code, status, 'connect ECONNREFUSED 10.1.2.3:9000');
  it.each([
    ['no connection', s3('Error', undefined), true],
    ['a timeout', s3('TimeoutError', undefined), true],
    ['503 SlowDown', s3('SlowDown', 503), true],
    ['500 InternalError', s3('InternalError', 500), true],
    ['wrapped in another error', new Error('could not store', { cause: s3('Error', undefined) }), true],
    ['403 AccessDenied', s3('AccessDenied', 403), false],
    ['404 NoSuchBucket', s3('NoSuchBucket', 404), false],
    ['an abort', s3('AbortError', undefined), false],
    ['a disk error', coded('EIO: i/o error', 'EIO'), false],
  ])('%s: %s', (_what, err, expected) => {
    expect(isStorageUnavailable(err)).toBe(expected);
  });
});

describe('what callers see', () => {
  it('the database unreachable: 503 service_unavailable with Retry-After, naming no host', () => {
    const err = asAppError(coded('connect ECONNREFUSED 10.0.0.7:5432', 'ECONNREFUSED'));
    expect(err.code).toBe('service_unavailable');
    expect(err.status).toBe(503);
    expect(Number(err.headers?.['retry-after'])).toBeGreaterThan(0);
    expect(err.message).not.toMatch(/10\.0\.0\.7|5432/);
  });

  it('the bucket unreachable: 503 service_unavailable with Retry-After, naming no bucket or host', () => {
    const err = asAppError(new S3StorageError('HeadObject', 's3://private-bucket/results/t/x.png', 'Error', undefined, 'connect ECONNREFUSED 10.1.2.3:9000'));
    expect(err.code).toBe('service_unavailable');
    expect(Number(err.headers?.['retry-after'])).toBeGreaterThan(0);
    expect(err.message).not.toMatch(/private-bucket|10\.1\.2\.3|9000|results/);
  });

  it('anything else: a bare 500', () => {
    expect(asAppError(new TypeError('x is undefined')).code).toBe('internal_error');
    expect(asAppError(new S3StorageError('upload', 's3://b/k', 'AccessDenied', 403, '')).code).toBe('internal_error');
  });

  it('a task failed by a storage fault says so without the bucket, key, host or port (G263)', () => {
    const message = failureMessage(new S3StorageError('upload', 's3://private-bucket/results/t/video.mp4', 'AccessDenied', 403, 'Access Denied'));
    expect(message).toBe('the gateway could not store the result in its file storage');
    expect(
      failureMessage(
        new Error('outer', { cause: new S3StorageError('upload', 's3://private-bucket/k', 'Error', undefined, 'connect ECONNREFUSED 10.1.2.3:9000') }),
      ),
    ).not.toMatch(/private-bucket|10\.1\.2\.3/);
  });
});
