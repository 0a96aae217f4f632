import net from 'node:net';
import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { NEEDS_ISOLATION } from './test/helpers/needs-isolation.js';
import { POSTGRES_ADMIN_URL } from './test/helpers/postgres-url.js';

/**
 * Tests are chosen by folder (G292): `test/unit/` (no gateway, no child process, no ffmpeg, no
 * database server), `test/gateway/` (the gateway in this process, through the harness),
 * `test/process/` (spawned gateways and CLIs), `test/postgres/` (needs a PostgreSQL server, in process).
 *
 * Four projects: `main` (every folder but `test/postgres/` and `test/process/`, the gateway tests on
 * SQLite, one module graph per worker: G287), `main-isolated` (`test/process/` and the files of
 * NEEDS_ISOLATION (test/helpers/needs-isolation.ts), a fresh module graph per file), `postgres-e2e`
 * (MEDIAGATE_TEST_STORE=postgres: `test/gateway/` again, whose harness then opens a PostgreSQL
 * store copied from a template migrated once per run (G279), but not `test/gateway/store-agnostic/`,
 * whose results do not depend on the store; one module graph per worker: G280) and
 * `postgres-e2e-isolated` (`test/postgres/` and the gateway files of NEEDS_ISOLATION, on PostgreSQL;
 * `--project 'postgres-e2e*'` runs both). These two are left out, saying why, when no PostgreSQL answers, except under
 * MEDIAGATE_TEST_REQUIRE_POSTGRES=1 (CI), where that is an error. `--project main` runs one;
 * `npm run test:fast` runs `test/unit/`, `test/gateway/`, `src/` and `console/src/` on SQLite (`main` and
 * `main-isolated`).
 */
const POSTGRES_URL = new URL(POSTGRES_ADMIN_URL);

function postgresAnswers(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: POSTGRES_URL.hostname, port: Number(POSTGRES_URL.port || 5432) });
    const done = (why: string | undefined): void => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(2000, () => done('no answer within 2 s'));
    socket.once('error', (err) => done(err.message));
    socket.once('connect', () => done(undefined));
  });
}

/** Test processes at once: MEDIAGATE_TEST_WORKERS (a whole number from 1), else two per core (G421). */
function testWorkers(): number {
  const set = process.env.MEDIAGATE_TEST_WORKERS;
  if (set === undefined || set === '') return 2 * os.availableParallelism();
  if (!/^[1-9][0-9]*$/.test(set)) throw new Error(`MEDIAGATE_TEST_WORKERS must be a whole number from 1, got "${set}"`);
  return Number(set);
}

export default defineConfig(async () => {
  const down = await postgresAnswers();
  if (down && process.env.MEDIAGATE_TEST_REQUIRE_POSTGRES === '1')
    throw new Error(`PostgreSQL at ${POSTGRES_URL.host} is unreachable (${down}); MEDIAGATE_TEST_REQUIRE_POSTGRES=1 requires it`);
  if (down) console.warn(`skipping the postgres-e2e project (the gateway tests on PostgreSQL): ${POSTGRES_URL.host} is unreachable (${down})`);
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 30_000,
      pool: 'forks',
      // Vitest's default for a run is one worker per core less one: a single worker on 2 cores,
      // idle while its tests wait for sockets, processes and ffmpeg. Two per core (G293, G421): a
      // worker spends about half its time waiting on the timers its tests are about.
      // MEDIAGATE_TEST_WORKERS sets another count (the command line's --maxWorkers does not reach the projects).
      maxWorkers: testWorkers(),
      globalSetup: ['test/helpers/run-setup.ts'],
      projects: [
        // One module graph per worker for the files whose tests hold no module state (G287): the
        // gateway is imported once per worker, not once per file. The files that mock a module,
        // measure the process or turn tracing on (NEEDS_ISOLATION) keep a fresh graph each, in
        // `main-isolated`; so does `test/process/`, which spawns its gateways.
        {
          extends: true,
          test: {
            name: 'main',
            include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'console/src/**/*.test.tsx'],
            exclude: ['test/postgres/**', 'test/process/**', ...NEEDS_ISOLATION],
            isolate: false,
          },
        },
        { extends: true, test: { name: 'main-isolated', include: ['test/process/**/*.test.ts', ...NEEDS_ISOLATION] } },
        // The gateway tests again on PostgreSQL, one module graph per worker as in `main` (G280);
        // `test/postgres/` and the gateway files of NEEDS_ISOLATION keep a fresh graph each.
        ...(down
          ? []
          : [
              {
                extends: true,
                test: {
                  name: 'postgres-e2e',
                  include: ['test/gateway/**/*.test.ts'],
                  exclude: ['test/gateway/store-agnostic/**', ...NEEDS_ISOLATION],
                  env: { MEDIAGATE_TEST_STORE: 'postgres' },
                  isolate: false,
                },
              },
              {
                extends: true,
                test: {
                  name: 'postgres-e2e-isolated',
                  include: [
                    'test/postgres/**/*.test.ts',
                    ...NEEDS_ISOLATION.filter((f) => f.startsWith('test/gateway/') && !f.startsWith('test/gateway/store-agnostic/')),
                  ],
                  env: { MEDIAGATE_TEST_STORE: 'postgres' },
                },
              },
            ]),
      ],
    },
  };
});
