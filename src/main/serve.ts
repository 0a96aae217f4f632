import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../app.js';
import { ensureApiKey } from '../auth/keys.js';
import { ChatProviderRegistry } from '../chat/registry.js';
import { createSandboxChatProvider } from '../chat/sandbox.js';
import { loadChatUpstreams } from '../chat/upstream-config.js';
import { loadConfig, type Config } from '../config.js';
import { createLogger } from '../logger.js';
import { FsBlobStore } from '../media/blob-store.js';
import { killAllFfmpeg } from '../media/ffmpeg.js';
import { fetchMedia } from '../media/safe-fetch.js';
import { createMediaServices } from './media-services.js';
import { loadSigningSecret, ResultUrlSigner } from '../media/signed-url.js';
import { ProviderRegistry } from '../providers/registry.js';
import { createSandboxProvider } from '../providers/sandbox/index.js';
import { openSqliteStore } from '../store/sqlite/open.js';
import { startRetentionSweeper } from '../tasks/retention.js';
import { TaskRunner } from '../tasks/runner.js';

export interface RunningServer {
  url: string;
  config: Config;
  /** Graceful stop: no new work, running tasks finish or go back to the queue, then close. */
  close(): Promise<void>;
}

/** Starts the gateway: store, providers, workers, HTTP. `env` defaults to the process environment. */
export async function startServer(env: Record<string, string | undefined> = process.env): Promise<RunningServer> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const sqliteLog = logger.child({ component: 'sqlite' });
  const store = openSqliteStore(path.join(config.dataDir, 'mediagate.db'), {
    synchronous: env.MEDIAGATE_SQLITE_SYNC === 'full' ? 'full' : 'normal',
    backgroundCheckpoint: { intervalMs: 500, logger: sqliteLog },
    logger: sqliteLog,
  });
  if (config.bootstrapKey) ensureApiKey(store.keys, config.bootstrapKey, 'bootstrap');
  const signer = new ResultUrlSigner(loadSigningSecret(config.dataDir, config.signingSecret), config.publicUrl);
  const blobs = new FsBlobStore(path.join(config.dataDir, 'results'));
  const tmpDir = path.join(config.dataDir, 'tmp');
  fs.rmSync(tmpDir, { recursive: true, force: true });
  fs.mkdirSync(tmpDir, { recursive: true });
  const providers = new ProviderRegistry([createSandboxProvider({ timing: config.sandboxTiming })], config.modelRoutes);
  const upstreams = loadChatUpstreams(env);
  const chat = new ChatProviderRegistry([createSandboxChatProvider({ tokensPerSecond: config.sandboxChatTokensPerSecond }), ...upstreams.providers], upstreams.routes);

  const media = createMediaServices(config, store, tmpDir);
  const runner = config.workers
    ? new TaskRunner({
      store: store.tasks, providers, blobs, log: logger.child({ component: 'runner' }), tmpDir,
      concurrency: config.workerConcurrency, maxAttempts: config.maxAttempts, leaseMs: config.leaseMs,
      videosResultTtlHours: config.videosResultTtlHours,
      fetchMedia: async (url, field, maxBytes) => (await fetchMedia(url, { field, maxBytes, allowPrivate: config.allowPrivateUrls })).bytes,
      inputs: media.inputs,
      attemptTimeoutMs: config.attemptTimeoutMs,
    })
    : undefined;
  const app = await buildApp({ config, store, providers, chat, signer, blobs, logger, media, ...(runner && { runner }) });
  const address = await app.listen({ port: config.port, host: config.host });
  runner?.start();
  const retentionLog = logger.child({ component: 'retention' });
  const stopSweeper = startRetentionSweeper(store.tasks, blobs, retentionLog, config.videosResultTtlHours, { ...media, idempotency: store.idempotency });
  logger.info({ address, dataDir: config.dataDir, workers: config.workers, sandboxTiming: config.sandboxTiming }, 'mediagate listening');

  let closing: Promise<void> | undefined;
  return {
    url: address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    config,
    close: () => {
      closing ??= (async () => {
        stopSweeper();
        await Promise.all([app.close(), runner?.stop()]);
        killAllFfmpeg();
        await chat.close();
        store.close();
        logger.info('mediagate stopped');
      })();
      return closing;
    },
  };
}
