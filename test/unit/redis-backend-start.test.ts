/** G196: a Redis that cannot be reached at start stops the start, naming the setting, never the password. */
import net from 'node:net';
import { expect, it } from 'vitest';
import { openRedisBackend } from '../../src/limits/redis.js';

it('an unreachable MEDIAGATE_REDIS_URL rejects with the setting named and the password hidden', async () => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve())); // a port nothing listens on
  const failure = await openRedisBackend(`redis://:s3cret-pass@127.0.0.1:${port}/0`).then(
    () => undefined,
    (err: Error) => err,
  );
  expect(failure).toBeInstanceOf(Error);
  expect(failure!.message).toContain('MEDIAGATE_REDIS_URL');
  expect(failure!.message).toContain(`127.0.0.1:${port}`);
  expect(failure!.message).not.toContain('s3cret-pass');
});
