import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ChatProviderRegistry } from '../../src/chat/registry.js';
import { createSandboxChatProvider } from '../../src/chat/sandbox.js';
import type { ChatProvider } from '../../src/chat/types.js';
import { createApiKey } from '../../src/auth/keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { FsBlobStore } from '../../src/media/blob-store.js';
import { ResultUrlSigner } from '../../src/media/signed-url.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import type { Provider } from '../../src/providers/types.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { createMediaServices } from '../../src/main/media-services.js';
import type { Store, TaskRecord, TaskStatus } from '../../src/store/types.js';
import { TaskRunner } from '../../src/tasks/runner.js';

export interface Harness {
  app: FastifyInstance;
  store: Store;
  config: Config;
  runner: TaskRunner | undefined;
  signer: ResultUrlSigner;
  blobs: FsBlobStore;
  dataDir: string;
  /** A bearer key owned by "alice", and one owned by "bob". */
  key: string;
  otherKey: string;
  auth(key?: string): Record<string, string>;
  waitForTask(id: string, statuses?: TaskStatus[], timeoutMs?: number): Promise<TaskRecord>;
  close(): Promise<void>;
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
  /** Chat providers (default: the sandbox at the configured rate, unlimited in tests) and their model routes. */
  chatProviders?: ChatProvider[];
  chatRoutes?: Record<string, string>;
}

export function tempDir(prefix = 'mediagate-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** An app on an in-memory store with a sandbox worker at `instant` timing, two keys and a temp data dir. */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = tempDir();
  const config = loadConfig({
    MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_SANDBOX_TIMING: 'instant', MEDIAGATE_LOG_LEVEL: 'silent',
    MEDIAGATE_ALLOW_PRIVATE_URLS: '1', MEDIAGATE_RATE_LIMIT: 'off', MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0', MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: '0', MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop', ...options.env,
  });
  const logger = createLogger(config.logLevel);
  const store = openSqliteStore(':memory:');
  const signer = new ResultUrlSigner(config.signingSecret!, config.publicUrl);
  const blobs = new FsBlobStore(path.join(dataDir, 'results'));
  const tmpDir = path.join(dataDir, 'tmp');
  fs.mkdirSync(tmpDir, { recursive: true });
  const providers = new ProviderRegistry(options.providers ?? [createSandboxProvider({ timing: config.sandboxTiming })], config.modelRoutes);
  const chat = new ChatProviderRegistry(options.chatProviders ?? [createSandboxChatProvider({ tokensPerSecond: config.sandboxChatTokensPerSecond })], options.chatRoutes);
  const services = createMediaServices(config, store, tmpDir);
  const media = options.reviewMedia === false ? { ...services, reviewer: undefined } : services;
  const runner = options.workers === false ? undefined : new TaskRunner({
    store: store.tasks, providers, blobs, log: logger, tmpDir, concurrency: config.workerConcurrency,
    maxAttempts: config.maxAttempts, leaseMs: config.leaseMs, videosResultTtlHours: config.videosResultTtlHours,
    fetchMedia: async (url) => Buffer.from(await (await fetch(url)).arrayBuffer()), pollMs: 50, inputs: media.inputs,
  });
  const app = await buildApp({ config, store, providers, chat, signer, blobs, logger, media, ...(runner && { runner }) });
  runner?.start();
  const key = createApiKey(store.keys, 'alice').secret;
  const otherKey = createApiKey(store.keys, 'bob').secret;
  return {
    app, store, config, runner, signer, blobs, dataDir, key, otherKey,
    auth: (k = key) => ({ authorization: `Bearer ${k}` }),
    waitForTask: (id, statuses = ['completed', 'failed', 'cancelled'], timeoutMs = 15_000) => waitFor(() => {
      const t = store.tasks.get(id);
      return t && statuses.includes(t.status) ? t : undefined;
    }, timeoutMs, `task ${id} to reach ${statuses.join('/')}`),
    close: async () => {
      await runner?.stop(1000);
      await app.close();
      store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `probe` until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
