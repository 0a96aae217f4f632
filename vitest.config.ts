import fs from 'node:fs';
import net from 'node:net';
import { defineConfig } from 'vitest/config';

/**
 * Two projects: `main` (every test; the gateway tests on in-memory SQLite) and `postgres-e2e` (the
 * gateway tests, those built on the harness, again on PostgreSQL: MEDIAGATE_TEST_STORE=postgres).
 * The second is left out, saying why, when no PostgreSQL answers, except under
 * MEDIAGATE_TEST_REQUIRE_POSTGRES=1 (CI), where that is an error. `--project main` runs one.
 */
const POSTGRES_URL = new URL(process.env.MEDIAGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');

/** Harness-built gateway suites; chat-token-dos measures CPU under load and needs no store. */
const gatewaySuites = (): string[] => (fs.readdirSync('test', { recursive: true }) as string[])
  .filter((f) => f.endsWith('.test.ts') && !f.endsWith('chat-token-dos.test.ts'))
  .filter((f) => fs.readFileSync(`test/${f}`, 'utf8').includes('createHarness('))
  .map((f) => `test/${f}`);

function postgresAnswers(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: POSTGRES_URL.hostname, port: Number(POSTGRES_URL.port || 5432) });
    const done = (why: string | undefined): void => { socket.destroy(); resolve(why); };
    socket.setTimeout(2000, () => done('no answer within 2 s'));
    socket.once('error', (err) => done(err.message));
    socket.once('connect', () => done(undefined));
  });
}

export default defineConfig(async () => {
  const down = await postgresAnswers();
  if (down && process.env.MEDIAGATE_TEST_REQUIRE_POSTGRES === '1') throw new Error(`PostgreSQL at ${POSTGRES_URL.host} is unreachable (${down}); MEDIAGATE_TEST_REQUIRE_POSTGRES=1 requires it`);
  if (down) console.warn(`skipping the postgres-e2e project (the gateway tests on PostgreSQL): ${POSTGRES_URL.host} is unreachable (${down})`);
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 30_000,
      pool: 'forks',
      projects: [
        { extends: true, test: { name: 'main', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
        ...(down ? [] : [{ extends: true, test: { name: 'postgres-e2e', include: gatewaySuites(), env: { MEDIAGATE_TEST_STORE: 'postgres' } } }]),
      ],
    },
  };
});
