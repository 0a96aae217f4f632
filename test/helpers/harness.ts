import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ChatProvider } from '../../src/chat/types.js';
import { createApiKey } from '../../src/auth/keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { BlobStore } from '../../src/media/blob-store.js';
import { FsBlobStore } from '../../src/media/fs-blob-store.js';
import type { ResultUrlSigner } from '../../src/media/signed-url.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/main/gateway.js';
import type { BreakerSettings } from '../../src/providers/channels.js';
import type { RouteCandidate } from '../../src/contract/task-request.js';
import type { Provider } from '../../src/providers/types.js';
import { harnessOnPostgres, openTestPostgresStore } from './postgres.js';
import type { Store, TaskRecord, TaskStatus } from '../../src/store/types.js';
import type { TaskRunner } from '../../src/tasks/runner.js';
import { openMemoryStore } from './migrated-store.js';
import { tempDir } from './temp-root.js';
import { waitFor } from './wait-for.js';

export interface Harness {
  app: FastifyInstance;
  store: Store;
  config: Config;
  runner: TaskRunner | undefined;
  signer: ResultUrlSigner;
  /** The result files (the data directory's `results/`, or the bucket with MEDIAGATE_S3_BUCKET). */
  blobs: BlobStore;
  dataDir: string;
  /** The gateway's scratch folder (`<data>/tmp/<pid>-<random>`). */
  tmpDir: string;
  /** A bearer key owned by "alice", and one owned by "bob". */
  key: string;
  otherKey: string;
  auth(key?: string): Record<string, string>;
  waitForTask(id: string, statuses?: TaskStatus[], timeoutMs?: number): Promise<TaskRecord>;
  close(): Promise<void>;
  /** The whole gateway (channels, services), for tests that look inside. */
  gateway: Gateway;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Run an in-process worker (default true). */
  workers?: boolean;
  /**
   * Review caller media at submit (default true). Contract tests that check request rules with
   * placeholder URLs turn it off; media review has tests of its own with real media.
   */
  reviewMedia?: boolean;
  providers?: Provider[];
  /** Circuit breaker settings of the channels. */
  breaker?: BreakerSettings;
  /** The worker's own waits (retries, server faults, waiting for a channel) times this (default 1), G267. */
  backoffScale?: number;
  /** The clock of the channels' circuits (default Date.now): a test steps it past an open period. */
  channelClock?: () => number;
  /** Model routes over `providers`. */
  routes?: Record<string, RouteCandidate[]>;
  /** Chat providers (default: the sandbox at the configured rate, unlimited in tests) and their model routes. */
  chatProviders?: ChatProvider[];
  chatRoutes?: Record<string, string>;
  /** A status stream's `: ping` after this long without an event, ms (default 15 s). */
  streamHeartbeatMs?: number;
  /** The webhook delivery worker's settings over the configured ones, and its name resolution (it reads the outbox every 50 ms). */
  webhooks?: GatewayOptions['webhooks'];
  /** The clock of keys' expiry and grace periods (default Date.now): a test steps it past them. */
  keyClock?: () => number;
  /** The store (default: a new in-memory SQLite, or PostgreSQL database): two gateways on one store share it. */
  store?: Store;
  /** The built web console the gateway serves (default console/dist). */
  consoleDir?: string;
}

/**
 * A gateway built as `mediagate serve` builds it (src/main/gateway.ts), on an in-memory store
 * (a PostgreSQL database of its own with `MEDIAGATE_TEST_STORE=postgres`),
 * with a sandbox worker at `instant` timing, two keys and a temp data dir.
 */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = tempDir();
  const config = loadConfig({
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_SANDBOX_TIMING: 'instant',
    MEDIAGATE_LOG_LEVEL: 'silent',
    MEDIAGATE_ALLOW_PRIVATE_URLS: '1',
    MEDIAGATE_RATE_LIMIT: 'off',
    MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
    MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: '0',
    MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
    MEDIAGATE_MIN_FREE_DISK_MB: '0',
    ...(options.workers === false && { MEDIAGATE_WORKERS: '0' }),
    ...options.env,
  });
  const gateway = await createGateway(config, {
    store: options.store ?? (harnessOnPostgres ? await openTestPostgresStore() : openMemoryStore()),
    runnerPollMs: 50,
    ...(options.backoffScale !== undefined && { runnerBackoffScale: options.backoffScale }),
    drainLingerMs: 0, // closes at once: no test sends on an idle connection while its gateway stops
    webhooks: { pollMs: 50, ...options.webhooks },
    ...(options.providers && { providers: options.providers }),
    ...(options.routes && { routes: options.routes }),
    ...(options.breaker && { breaker: options.breaker }),
    ...(options.channelClock && { channelClock: options.channelClock }),
    ...(options.chatProviders && { chat: { providers: options.chatProviders, ...(options.chatRoutes && { routes: options.chatRoutes }) } }),
    ...(options.reviewMedia === false && { reviewMedia: false }),
    ...(options.streamHeartbeatMs !== undefined && { streamHeartbeatMs: options.streamHeartbeatMs }),
    ...(options.keyClock && { keyClock: options.keyClock }),
    ...(options.consoleDir !== undefined && { consoleDir: options.consoleDir }),
  });
  gateway.runner?.start();
  gateway.deliveries?.start();
  const { app, store, runner, signer, blobs } = gateway;
  const key = (await createApiKey(store.keys, 'alice')).secret;
  const otherKey = (await createApiKey(store.keys, 'bob')).secret;
  return {
    app,
    store,
    config,
    runner,
    signer,
    blobs,
    dataDir,
    tmpDir: gateway.tmpDir,
    key,
    otherKey,
    gateway,
    auth: (k = key) => ({ authorization: `Bearer ${k}` }),
    waitForTask: (id, statuses = ['completed', 'failed', 'cancelled'], timeoutMs = 15_000) =>
      waitFor(
        async () => {
          const t = await store.tasks.get(id);
          return t && statuses.includes(t.status) ? t : undefined;
        },
        timeoutMs,
        `task ${id} to reach ${statuses.join('/')}`,
      ),
    close: async () => {
      await gateway.close(1000);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The harness's result folder on disk, for tests that look at files directly (throws when results go to a bucket). */
export function localBlobs(h: Harness): FsBlobStore {
  if (!(h.blobs instanceof FsBlobStore)) throw new Error(`this test needs results on the local disk, not ${h.blobs.location}`);
  return h.blobs;
}
