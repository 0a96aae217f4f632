/**
 * The one wiring of a gateway process: store, providers, services, HTTP app, worker and retention
 * sweeper, from a validated configuration. `mediagate serve` and the test harness both build
 * through here; tests swap in their own store or providers through the options.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import { openScratchDir } from './scratch-dir.js';
import { auditEntry, BOOTSTRAP_ACTOR } from '../admin/actor.js';
import { ChannelStats } from '../admin/channel-stats.js';
import { createAdminServices } from '../admin/services.js';
import { KeyUsage } from '../auth/key-usage.js';
import { ensureApiKey } from '../auth/keys.js';
import { ConfigError } from '../config-error.js';
import { ChatCredits } from '../chat/chat-credits.js';
import { ChatService } from '../chat/service.js';
import type { Config, WebhookSettings } from '../config.js';
import type { MediaRef } from '../contract/media-refs.js';
import { createLogger } from '../logger.js';
import { LiveRequests } from '../http/live-requests.js';
import { HttpDrain } from '../http/drain.js';
import type { BlobStore } from '../media/blob-store.js';
import { type BlobStores, openBlobStores } from '../media/blob-stores.js';
import { ASSET_SCHEME } from '../media/media-review.js';
import { killAllFfmpeg } from '../media/ffmpeg.js';
import { resultLinks } from '../media/result-links.js';
import { loadSigningSecret, ResultUrlSigner } from '../media/signed-url.js';
import { type BreakerSettings, Channels } from '../providers/channels.js';
import { ProviderRegistry } from '../providers/registry.js';
import { ResourceMonitor } from '../resources.js';
import { createStore } from '../store/create-store.js';
import type { Store } from '../store/types.js';
import { IdempotencyService } from '../tasks/idempotency.js';
import { startRetentionSweeper } from '../tasks/retention.js';
import { ResultStorage } from '../tasks/result-storage.js';
import { CallbackReceiver, callbackUrlOf } from '../tasks/callbacks.js';
import { TaskRunner } from '../tasks/runner.js';
import { LIVE_WINDOW_MS, WorkerHeartbeat } from '../tasks/worker-heartbeat.js';
import { cancelUpstreamOf } from '../tasks/task-work.js';
import { TaskService } from '../tasks/service.js';
import { ElsewhereChanges } from '../tasks/elsewhere.js';
import { TaskStreams } from '../tasks/task-stream.js';
import { TaskWatch } from '../tasks/task-watch.js';
import { AccountView } from '../credits/account-view.js';
import { memoryBackend } from '../limits/backend.js';
import { WebhookKeys } from '../webhooks/webhook-keys.js';
import { isFinished, onTransition } from '../tasks/states.js';
import { openRateLimitBackend } from '../limits/open-backend.js';
import { DeliveryWorker, type DeliveryWorkerDeps } from '../webhooks/worker.js';
import { createMediaServices, type MediaServices } from './media-services.js';
import { createMetrics, creditTotals } from './observability.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { setUpProviders, type ProviderSetupOptions } from './provider-setup.js';

export interface GatewayOptions extends ProviderSetupOptions {
  logger?: Logger;
  /** Default: SQLite at `config.databaseFile`, WAL checkpoints on a thread of their own. */
  store?: Store;
  /** Circuit breaker settings of every channel (default: DEFAULT_BREAKER). */
  breaker?: BreakerSettings;
  /** The clock of the channels' circuits, ms (default Date.now; tests step it to open periods' ends). */
  channelClock?: () => number;
  /** Review caller media at submit (default true). */
  reviewMedia?: boolean;
  /** How often the worker looks for work from elsewhere, ms (default 1000). */
  runnerPollMs?: number;
  /** The worker's own waits (retries, server faults, waiting for a channel) times this (default 1; tests shorten them, G267). */
  runnerBackoffScale?: number;
  /** A status stream's `: ping` after this long without an event, ms (default 15 s). */
  streamHeartbeatMs?: number;
  /** Default: disk and descriptors of this machine, against `config.minFreeDiskBytes`. */
  resources?: ResourceMonitor;
  /** The webhook delivery worker (tests): how often it reads the outbox (ms, default 1000), its retry settings over the configured ones, name resolution. */
  webhooks?: { pollMs?: number; settings?: Partial<WebhookSettings>; lookup?: DeliveryWorkerDeps['lookup'] };
  /** The least time a drain keeps idle connections open for requests already on their way, ms (default {@link DRAIN_LINGER_MS}; G341). */
  drainLingerMs?: number;
  /** The clock of keys' expiry and grace periods and of admin changes (default Date.now; tests step it). */
  keyClock?: () => number;
  /** How often keys' last-used times are written, ms (default 60 s, G308). */
  keyUsageFlushMs?: number;
  /** The built web console (default console/dist, G360). */
  consoleDir?: string;
  /** How long `/readyz` waits for the store's ping, ms (default STORE_PING_MS, 3 s; G277). */
  storePingMs?: number;
}

/** A drain keeps idle keep-alive connections open at least this long (never past the grace period), ms (G341). */
export const DRAIN_LINGER_MS = 1000;
/** Replies still going this long after the grace period (a long download) are cut, ms (G342). */
const FORCE_CLOSE_AFTER_GRACE_MS = 1000;

export interface Gateway {
  config: Config;
  logger: Logger;
  store: Store;
  app: FastifyInstance;
  /** The in-process worker (`MEDIAGATE_WORKERS=1`), not yet started. */
  runner: TaskRunner | undefined;
  /** Status streams open in this process (`GET /v1/tasks/{id}/events`). */
  streams: TaskStreams;
  /** Long-poll waiters in this process (`?wait=N`). */
  watch: TaskWatch;
  /** The webhook delivery worker, in processes that run tasks (G211), not yet started. */
  deliveries: DeliveryWorker | undefined;
  signer: ResultUrlSigner;
  /** Result files (`storage.results`). */
  blobs: BlobStore;
  /** Results, caller media copies and assets: the data directory or the bucket (G170). */
  storage: BlobStores;
  media: MediaServices;
  /** The channels (providers) calls go through: their circuits and concurrency. */
  channels: Channels;
  /** This process's scratch folder (`<data>/tmp/<pid>-<random>`, G163). */
  tmpDir: string;
  /** The process's metrics (`/metrics`, G221); undefined when MEDIAGATE_METRICS_TOKEN is unset. Other parts report to it (the webhook sender: `webhookDelivery`). */
  metrics: GatewayMetrics | undefined;
  /** Starts the worker and the retention sweeper. */
  startBackground(): void;
  /**
   * Graceful stop (G340-G343): stop listening and claiming, end long-polls and status streams, answer
   * the requests still arriving on open connections (each then closes), let running tasks and chat
   * replies go on up to `graceMs` (default `MEDIAGATE_SHUTDOWN_GRACE_SECONDS`) and hand the tasks
   * still running back to the queue, then close everything.
   */
  close(graceMs?: number): Promise<void>;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  fs.mkdirSync(config.dataDir, { recursive: true });
  // the store's log lines name its engine (a PostgreSQL store's said `sqlite` until 2026-11-29)
  const storeLog = logger.child({ component: config.databaseUrl === undefined ? 'sqlite' : 'postgres' });
  const store =
    options.store ??
    (await createStore(config, {
      backgroundCheckpoint: { intervalMs: 500, logger: storeLog },
      logger: storeLog,
      queryTimeoutMs: config.databaseQueryTimeoutMs,
    }));
  await ensureBootstrapKeys(config, store);
  const signer = new ResultUrlSigner(loadSigningSecret(config.dataDir, config.signingSecret), config.publicUrl);
  const storage = await openBlobStores(config, { log: logger.child({ component: 'storage' }) });
  const blobs = storage.results;
  logger.info({ storage: storage.kind, results: blobs.location }, 'result storage');
  const scratch = openScratchDir(path.join(config.dataDir, 'tmp'));
  const tmpDir = scratch.dir;

  const setup = await setUpProviders(config, options);
  const providers = new ProviderRegistry(setup.providers, setup.routes);
  const metrics = await createMetrics(config, Object.keys(setup.routes));
  // the channels' outcomes, circuits and last errors, shared with the other processes through the store (G322)
  const channelStats = new ChannelStats(store.admin, logger.child({ component: 'channel-stats' }));
  channelStats.start();
  const channels = new Channels({
    log: logger.child({ component: 'channels' }),
    observe: (provider, outcome, seconds) => {
      metrics?.upstreamCall(provider, outcome, seconds);
      channelStats.observe(provider, outcome, seconds);
    },
    onStateChange: (provider, state, at) => channelStats.stateChanged(provider, state, at),
    onFault: (provider, err, at) => channelStats.fault(provider, err, at),
    concurrencyOf: (id) => providers.get(id)?.concurrency ?? config.workerConcurrency,
    ...(options.breaker && { breaker: options.breaker }),
    ...(options.channelClock && { now: options.channelClock }),
  });
  const media = createMediaServices(config, store, tmpDir, storage);
  const resources = options.resources ?? new ResourceMonitor(config.dataDir, config.minFreeDiskBytes);

  metrics?.watchCircuits(() => providers.ids().map((id) => [id, channels.state(id)]));
  metrics?.watchStore({
    liveCounts: () => store.tasks.liveCounts(),
    creditTotals: () => creditTotals(store),
    liveWorkers: () => store.workers.liveByRole(Date.now() - LIVE_WINDOW_MS),
  });
  // the engine's view of the tasks: terminal transitions won here are timed (G224)
  // submit-to-terminal times (G224): every terminal transition this process wins, whoever made it (G393)
  if (metrics)
    onTransition(store.tasks, ({ task, statusChanged }) => {
      if (statusChanged && isFinished(task.status)) metrics.taskFinished(task);
    });
  const runner = config.workers
    ? new TaskRunner({
        store: store.tasks,
        providers,
        channels,
        log: logger.child({ component: 'runner' }),
        tmpDir,
        results: new ResultStorage({ blobs, tmpDir, allowPrivate: config.allowPrivateUrls }),
        mediaUrl: (taskId, ref) => mediaUrlOf(signer, taskId, ref),
        // upstreams are asked to notify the end of a generation only where the operator turned it on (G157)
        ...(config.providerCallbacks && {
          callbackUrl: (providerId: string, taskId: string) =>
            providers.get(providerId)?.callbacks ? callbackUrlOf(config.publicUrl, providerId, taskId) : undefined,
        }),
        concurrency: config.workerConcurrency,
        maxAttempts: config.maxAttempts,
        leaseMs: config.leaseMs,
        videosResultTtlHours: config.videosResultTtlHours,
        attemptTimeoutMs: config.attemptTimeoutMs,
        unavailableFailMs: config.unavailableFailMs,
        fetchMedia: (url, field, maxBytes, signal) => media.fetch(url, field, maxBytes, () => true, signal),
        inputs: media.inputs,
        resources,
        ...(store.runAlone && { runAlone: store.runAlone.bind(store) }),
        ...(store.lastFaultAt && { storeFaultAt: store.lastFaultAt.bind(store) }),
        ...(options.runnerPollMs !== undefined && { pollMs: options.runnerPollMs }),
        ...(options.runnerBackoffScale !== undefined && { backoffScale: options.runnerBackoffScale }),
      })
    : undefined;
  // long-polls and streams share the one look at other processes' writes (changedElsewhere answers once)
  const elsewhere = new ElsewhereChanges(store.tasks);
  const watch = new TaskWatch(store.tasks, { elsewhere, ...(store.waitSlots && { slots: store.waitSlots }) });
  const streams = new TaskStreams(store.tasks, {
    elsewhere,
    ...(store.waitSlots && { slots: store.waitSlots }),
    ...(options.streamHeartbeatMs !== undefined && { heartbeatMs: options.streamHeartbeatMs }),
  });
  const keyClock = options.keyClock ?? Date.now;
  const keyUsage = new KeyUsage(
    store.keys,
    (err) => logger.warn({ err }, "could not write keys' last-used times; kept for the next try"),
    options.keyUsageFlushMs,
  );
  const tasks = new TaskService({
    now: keyClock,
    onKeyUsed: (id, at) => keyUsage.touch(id, at),
    store: store.tasks,
    keys: store.keys,
    providers,
    channels,
    onSubmitted: () => runner?.wake(),
    onCancelled: (task) => {
      runner?.abortTask(task.id);
      void cancelUpstreamOf(task, providers, logger.child({ component: 'cancel' }));
    },
    watch,
    videosResultTtlHours: config.videosResultTtlHours,
    maxTasksInFlight: config.maxTasksInFlight,
    allowPrivateUrls: config.allowPrivateUrls,
    credits: { prices: config.credits.prices, enforce: config.credits.enforce, balances: store.credits },
    ...(options.reviewMedia !== false && { media: media.reviewer }),
  });
  const callbacks = config.providerCallbacks
    ? new CallbackReceiver({ store: store.tasks, providers, log: logger.child({ component: 'callbacks' }), wake: () => runner?.wake() })
    : undefined;
  const idempotency = new IdempotencyService(store.idempotency, store.tasks);
  const chat = new ChatService({
    providers,
    channels,
    usage: store.usage,
    heartbeatMs: config.chatHeartbeatMs,
    allowPrivateUrls: config.allowPrivateUrls,
    metrics,
    credits: new ChatCredits({
      store: store.credits,
      prices: config.credits.prices,
      enforce: config.credits.enforce,
      holdTokens: config.credits.chatHoldTokens,
    }),
  });
  const rateLimits = config.rateLimits ? await openRateLimitBackend(config.redisUrl, store, logger.child({ component: 'rate-limits' })) : memoryBackend;
  if (config.rateLimits) logger.info({ counts: rateLimits.name }, 'per-key rate limits');
  const live = new LiveRequests(store.keys, 1000, (err) => logger.warn({ err }, 'could not check the keys of open requests for revocation'), keyClock);
  const links = resultLinks(signer, config.videosResultTtlHours);
  const admin = createAdminServices(config, store, {
    now: keyClock,
    flushKeyUsage: () => keyUsage.flush(),
    runtime: { tasks, providers, links, typeOf: (id) => setup.types[id] ?? null, routes: setup.routes, stats: channelStats },
  });
  const app = await buildApp({
    config,
    store,
    signer,
    storage,
    logger,
    live,
    resources,
    rateLimits,
    metrics,
    keyUsage,
    now: keyClock,
    ...(options.consoleDir !== undefined && { consoleDir: options.consoleDir }),
    ...(options.storePingMs !== undefined && { storePingMs: options.storePingMs }),
    services: {
      tasks,
      chat,
      idempotency,
      assets: media.assets,
      links,
      streams,
      admin,
      accounts: new AccountView(store.credits),
      webhooks: new WebhookKeys(store.webhooks),
      ...(callbacks && { callbacks }),
    },
  });
  keyUsage.start();
  // webhook deliveries go out wherever tasks are run (G211)
  const deliveries = config.workers
    ? new DeliveryWorker({
        webhooks: store.webhooks,
        tasks: store.tasks,
        links,
        log: logger.child({ component: 'webhooks' }),
        settings: { ...config.webhooks, ...options.webhooks?.settings },
        allowPrivate: config.allowPrivateUrls,
        metrics,
        ...(options.webhooks?.pollMs !== undefined && { pollMs: options.webhooks.pollMs }),
        ...(options.webhooks?.lookup && { lookup: options.webhooks.lookup }),
      })
    : undefined;
  // a process that runs tasks says so through the store (G264)
  const heartbeat = runner
    ? new WorkerHeartbeat(store.workers, { id: runner.workerId, role: config.role }, logger.child({ component: 'heartbeat' }))
    : undefined;
  const drain = new HttpDrain(app.server);
  app.addHook('onClose', async () => {
    watch.close();
    streams.close();
    callbacks?.close();
  });

  let stopSweeper: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  return {
    config,
    logger,
    store,
    app,
    runner,
    streams,
    watch,
    deliveries,
    signer,
    blobs,
    storage,
    media,
    channels,
    tmpDir,
    metrics,
    startBackground() {
      runner?.start();
      heartbeat?.start();
      deliveries?.start();
      stopSweeper ??= startRetentionSweeper(store.tasks, blobs, logger.child({ component: 'retention' }), config.videosResultTtlHours, {
        ...media,
        idempotency,
        credits: store.credits,
        queueTtlHours: config.queueTtlHours,
        ...(store.runAlone && { runAlone: store.runAlone.bind(store) }),
      });
    },
    close(graceMs = config.shutdownGraceMs) {
      closing ??= (async () => {
        stopSweeper?.();
        const listening = app.server.listening;
        // no new connection; a request still arriving on an open one is answered, then its connection closes (G341)
        drain.start();
        logger.info({ graceMs, running: runner?.inFlight ?? 0, openRequests: live.size }, 'shutting down: no new connections or tasks');
        // past the grace period (and a moment for the last bytes) no reply is waited for any more
        const cut = setTimeout(() => drain.closeAll(), graceMs + FORCE_CLOSE_AFTER_GRACE_MS);
        cut.unref();
        const linger = Math.min(graceMs, listening ? (options.drainLingerMs ?? DRAIN_LINGER_MS) : 0);
        // long-polls and status streams end now, chat replies at the end of the grace period (G343);
        // running tasks finish, or go back to the queue at its end without using an attempt (G342)
        await Promise.all([
          live.shutdown(graceMs),
          runner?.stop(graceMs).then(() => heartbeat?.stop()),
          deliveries?.stop(),
          linger > 0 ? new Promise((resolve) => setTimeout(resolve, linger)) : undefined,
        ]);
        drain.closeIdle();
        await app.close();
        clearTimeout(cut);
        await keyUsage.stop(); // the last requests' times, before the store closes (G308)
        await channelStats.stop().catch(() => undefined);
        killAllFfmpeg();
        await Promise.all([providers.close(), rateLimits.close()]);
        storage.close();
        await store.close();
        scratch.remove();
      })();
      return closing;
    },
  };
}

/**
 * MEDIAGATE_BOOTSTRAP_KEY and MEDIAGATE_BOOTSTRAP_ADMIN_KEY (G300): each stored if absent (audited
 * as `bootstrap`), a revoked one left revoked. An admin key that names an existing caller key (or
 * the other way round) stops the start: a key's role never changes.
 */
async function ensureBootstrapKeys(config: Config, store: Store): Promise<void> {
  const boot = [
    {
      secret: config.bootstrapKey,
      name: 'bootstrap',
      role: 'caller' as const,
      setting: 'MEDIAGATE_BOOTSTRAP_KEY',
      startingMicro: config.credits.startingMicro,
    },
    { secret: config.bootstrapAdminKey, name: 'bootstrap-admin', role: 'admin' as const, setting: 'MEDIAGATE_BOOTSTRAP_ADMIN_KEY', startingMicro: 0 },
  ];
  for (const b of boot) {
    if (b.secret === undefined) continue;
    const now = Date.now();
    const key = await ensureApiKey(store.keys, b.secret, b.name, { startingMicro: b.startingMicro }, now, {
      fields: { role: b.role },
      audit: (record, own) =>
        auditEntry(BOOTSTRAP_ACTOR, 'key.create', record.id, { name: b.name, role: b.role, account_id: record.accountId, new_account: own !== undefined }, now),
    });
    if ((key.role ?? 'caller') !== b.role)
      throw new ConfigError(b.setting, `names an existing ${key.role ?? 'caller'} key (${key.id}); a key's role never changes: choose another secret`);
  }
}

/** Signed URLs of caller media handed to an upstream expire at the end of the next period this long (valid 6-12 h). */
const INPUT_URL_PERIOD_MS = 6 * 3600_000;

/**
 * The URL an upstream fetches a caller medium from (G92): the caller's own URL, except for an
 * uploaded asset (`assetId://`, which no one else can open): a signed URL of the task's copy.
 * Its expiry is the end of the next 6-hour period rather than now + 6 h, so a create repeated
 * after a crash (the same Idempotency-Key, G86) sends the same body, and an upstream mediagate
 * answers it with the same generation instead of a 409 for another body (G71, G95).
 */
export function mediaUrlOf(signer: ResultUrlSigner, taskId: string, ref: MediaRef, now = Date.now()): string {
  if (!ref.url.startsWith(ASSET_SCHEME) || ref.stored === undefined) return ref.url;
  return signer.signInputUrl(taskId, ref.stored, (Math.floor(now / INPUT_URL_PERIOD_MS) + 2) * INPUT_URL_PERIOD_MS);
}
