/**
 * Redis for tests: the local server (127.0.0.1:6379, or MEDIAGATE_TEST_REDIS_URL). When it does not
 * answer, the suites that need it are skipped with the reason printed, except when
 * `MEDIAGATE_TEST_REQUIRE_REDIS=1` (CI), where that is a failure.
 */
import net from 'node:net';

export const REDIS_URL = process.env.MEDIAGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why Redis cannot be used (undefined when it can); throws instead when the environment requires it. */
export async function redisUnavailable(): Promise<string | undefined> {
  const url = new URL(REDIS_URL);
  const reason = await new Promise<string | undefined>((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 6379) });
    const done = (why: string | undefined): void => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(3000, () => done('no answer within 3 s'));
    socket.once('error', (err) => done(err.message));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG') ? undefined : `unexpected answer ${JSON.stringify(data.toString())}`));
  });
  if (reason === undefined) return undefined;
  const message = `Redis at ${url.host} is unreachable (${reason})`;
  if (process.env.MEDIAGATE_TEST_REQUIRE_REDIS === '1') throw new Error(`${message}; MEDIAGATE_TEST_REQUIRE_REDIS=1 requires it`);
  console.warn(`skipping the Redis tests: ${message}`);
  return message;
}
