import path from 'node:path';
import type { Env } from './config-error.js';
import type { PriceBook } from './credits/prices.js';
import { readObservability, type ObservabilitySettings } from './metrics/settings.js';
import { readSettings, type SettingValues } from './settings/read-settings.js';
import { settingVariables, type SettingVariable } from './settings/variables.js';

/**
 * What the settings table (src/settings/table.ts, G290: each setting's type, default, bounds and
 * description; the settings reference is written from it) and the metrics and tracing settings give
 * a process: every setting but the two files that configure upstreams (providers.json and the chat
 * upstreams), which `Config` (config.ts) adds. The operator commands (keys, accounts, credits,
 * backup, migrate-store) read only this, so they never load the provider adapters (G420). A bad
 * value throws a ConfigError naming the setting.
 */
type S = SettingValues;

/** How long the sandbox provider takes (D26). */
export type SandboxTiming = S['MEDIAGATE_SANDBOX_TIMING'];

export interface SettingsConfig {
  /** Every server setting by its environment variable, as read (G447): what the admin settings view shows operators, secrets redacted there. Holds secrets: never log it. */
  variables: readonly SettingVariable[];
  host: S['HOST'];
  port: S['PORT'];
  /** Absolute directory holding the SQLite database, result files and the signing secret. */
  dataDir: string;
  /** The SQLite database file, `<dataDir>/mediagate.db`. */
  databaseFile: string;
  /** `MEDIAGATE_DATABASE_URL`: a PostgreSQL database instead of the SQLite file (G177). Holds credentials: never log it. */
  databaseUrl?: string;
  /** `MEDIAGATE_DATABASE_QUERY_TIMEOUT_SECONDS` in ms: a gateway process's bound on one PostgreSQL statement (G451); 0 none. */
  databaseQueryTimeoutMs: number;
  /** `MEDIAGATE_REDIS_URL`: rate-limit counts in Redis, shared by every process (G196). Holds credentials: never log it. */
  redisUrl?: string;
  /** `full` fsyncs every SQLite commit (survives power loss); `normal` survives process crashes. */
  sqliteSync: S['MEDIAGATE_SQLITE_SYNC'];
  /** Public origin used in result URLs, no trailing slash (e.g. `https://media.example.com`). */
  publicUrl: string;
  /**
   * Ask upstreams that can notify the end of a generation (Replicate, fal) to do so at
   * `<publicUrl>/v1/provider-callbacks/...` (`MEDIAGATE_PROVIDER_CALLBACKS`, G157); polling stays on.
   */
  providerCallbacks: boolean;
  /** Path prefix of `{power_base_url}` (motion family), `''` or `/something`. */
  powerPrefix: string;
  /** Path prefix of `{api_base_url}` (clip/reel Form A), `''` or `/something`. */
  apiPrefix: string;
  bootstrapKey: S['MEDIAGATE_BOOTSTRAP_KEY'];
  /** `MEDIAGATE_BOOTSTRAP_ADMIN_KEY`: an admin key stored at start if absent (G300). A secret: never logged. */
  bootstrapAdminKey: S['MEDIAGATE_BOOTSTRAP_ADMIN_KEY'];
  sandboxTiming: SandboxTiming;
  allowPrivateUrls: boolean;
  logLevel: S['MEDIAGATE_LOG_LEVEL'];
  /** Secret for result URL signatures; undefined = generated once and kept in the data directory. */
  signingSecret: S['MEDIAGATE_SIGNING_SECRET'];
  /** Run the task workers inside this process. */
  workers: boolean;
  /** What this process does (MEDIAGATE_ROLE, `serve --role`): `api` answers callers, `worker` runs tasks, `all` both (G163). */
  role: S['MEDIAGATE_ROLE'];
  /** Tasks one provider runs at once in this process. */
  workerConcurrency: number;
  /** V8's heap growing factor for this process, percent over the live heap (0: V8's own choice). */
  heapGrowingPercent: number;
  /** Attempts a task gets before it fails for good (a worker that dies mid-task costs one). */
  maxAttempts: number;
  /** Lease length; a worker renews at a third of it. A task whose lease lapses is returned to the queue. */
  leaseMs: number;
  /** MEDIAGATE_SHUTDOWN_GRACE_SECONDS: on SIGTERM, how long running generations and chat replies may go on before they are handed back or ended (G342), ms. */
  shutdownGraceMs: number;
  /** Maximum request body, bytes. */
  bodyLimit: number;
  /** Retention of `videos` and Model Center results (D20: "24 h unless configured"). */
  videosResultTtlHours: number;
  /** MEDIAGATE_QUEUE_TTL_HOURS: a task still queued this long after its submission fails, its hold released (G249); 0: never. */
  queueTtlHours: number;
  /** Generation speed of the sandbox chat provider, tokens per second; 0 = unlimited. */
  sandboxChatTokensPerSecond: number;
  /** A `: ping` comment is sent on a chat stream after this long without an event, ms. */
  chatHeartbeatMs: number;
  /** Longest one generation attempt may run, ms. */
  attemptTimeoutMs: number;
  /** MEDIAGATE_UNAVAILABLE_FAIL_SECONDS: a task waiting because no upstream takes calls fails this long after it first found none, ms (G274). */
  unavailableFailMs: number;
  /** Queued + processing tasks one key may have; 0 = unlimited. */
  maxTasksInFlight: number;
  /** Per-key rate limits; undefined when `MEDIAGATE_RATE_LIMIT=off`. */
  rateLimits: { submitRate: number; queryRate: number } | undefined;
  /** Largest asset upload (multipart file or fetched `{url}`), bytes. */
  assetMaxBytes: number;
  /** Bytes of approved assets one key may keep at once. */
  assetQuotaBytes: number;
  /** How long an uploaded asset is kept, hours. */
  assetTtlHours: number;
  /** Bound on fetching and checking all caller media of one submit, ms. */
  mediaReviewTimeoutMs: number;
  /** Caller media fetched and checked at once (G100): slots and reserved bytes, per process and per key. */
  mediaBudget: { slots: number; keySlots: number; bytes: number; keyBytes: number };
  /** model -> provider id overrides, from `MEDIAGATE_MODEL_ROUTES` (`pic-2=sandbox,*=sandbox`). */
  modelRoutes: S['MEDIAGATE_MODEL_ROUTES'];
  /** Most client connections open at once (more are refused at once); sized to the descriptor limit by default. */
  maxConnections: number;
  /** Free disk under the data directory below which /readyz fails and no task is claimed, bytes; 0: not checked. */
  minFreeDiskBytes: number;
  /** A request's headers must arrive within this long, ms (a connection that sends nothing is closed then). */
  headersTimeoutMs: number;
  /** Results, caller media copies and assets in an S3-compatible bucket (`MEDIAGATE_S3_BUCKET`); undefined: under the data directory (G170, G171). */
  s3: S3Settings | undefined;
  /** `MEDIAGATE_FILES_REDIRECT=1`: `/files` answers a redirect to a presigned bucket URL instead of streaming (G173; S3 only). */
  filesRedirect: boolean;
  /** How long a web console session lasts (`MEDIAGATE_CONSOLE_SESSION_HOURS`, G361), ms. */
  consoleSessionMs: number;
  /** Credits (G200-G205): prices, holds and the ledger are always kept; `enforce` refuses what an account cannot pay (402). */
  credits: CreditsSettings;
  /** Caller webhook deliveries (G211, G212). */
  webhooks: WebhookSettings;
  /** `/metrics` (its token, the keys and models it names) and OpenTelemetry tracing (G221-G229). */
  observability: ObservabilitySettings;
}

/** How webhook deliveries are attempted and retried (G211, G212), ms. */
export interface WebhookSettings {
  /** `MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS` (15): bound on one attempt, connect to the answer's excerpt. */
  timeoutMs: number;
  /** `MEDIAGATE_WEBHOOK_RETRY_SECONDS` (5): the wait after the first failed attempt; it doubles after each. */
  firstRetryMs: number;
  /** `MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS` (3600): the longest wait between attempts. */
  maxRetryMs: number;
  /** `MEDIAGATE_WEBHOOK_RETRY_HOURS` (24): a delivery still failing this long after it was queued is given up. */
  retryForMs: number;
}

export interface CreditsSettings {
  /** `MEDIAGATE_CREDITS=on`: a submit or chat request its account cannot cover is refused (402); off (default): recorded, never refused. */
  enforce: boolean;
  /** `MEDIAGATE_STARTING_CREDITS`: granted to each new account, micro-credits. */
  startingMicro: number;
  /** `MEDIAGATE_PRICES`: the catalog's prices with the operator's overrides, and chat prices. */
  prices: PriceBook;
  /** `MEDIAGATE_CHAT_HOLD_TOKENS`: completion tokens held for a chat request that sets no `max_completion_tokens`. */
  chatHoldTokens: number;
}

/** Where and how the bucket is reached; credentials come from the AWS SDK's own chain, never from here. */
export interface S3Settings {
  bucket: string;
  /** An S3-compatible service's URL (MinIO, R2, Ceph ...); undefined: AWS S3. */
  endpoint: string | undefined;
  /** undefined: the SDK's chain (`AWS_REGION`, the profile); `us-east-1` when an endpoint is given without one. */
  region: string | undefined;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key` (MinIO and most self-hosted servers need it). */
  forcePathStyle: boolean;
  /** Prepended to every key: `''` or a path ending in `/` (`mediagate/`). */
  prefix: string;
  /** `MEDIAGATE_S3_CREATE_BUCKET=1`: a start that finds no bucket creates it (G346). */
  createBucket: boolean;
}

const MS_PER_HOUR = 3_600_000;

/** Reads and validates every setting of the table once; a bad value throws a ConfigError naming it. */
export function loadSettingsConfig(env: Env = process.env): SettingsConfig {
  const s = readSettings(env);
  const role = s.MEDIAGATE_ROLE;
  const dataDir = s.MEDIAGATE_DATA_DIR;
  return {
    host: s.HOST,
    port: s.PORT,
    dataDir,
    databaseFile: path.join(dataDir, 'mediagate.db'),
    ...(s.MEDIAGATE_DATABASE_URL !== undefined && { databaseUrl: s.MEDIAGATE_DATABASE_URL }),
    databaseQueryTimeoutMs: s.MEDIAGATE_DATABASE_QUERY_TIMEOUT_SECONDS * 1000,
    ...(s.MEDIAGATE_REDIS_URL !== undefined && { redisUrl: s.MEDIAGATE_REDIS_URL }),
    sqliteSync: s.MEDIAGATE_SQLITE_SYNC,
    publicUrl: s.MEDIAGATE_PUBLIC_URL,
    providerCallbacks: s.MEDIAGATE_PROVIDER_CALLBACKS,
    powerPrefix: s.MEDIAGATE_POWER_PREFIX,
    apiPrefix: s.MEDIAGATE_API_PREFIX,
    bootstrapKey: s.MEDIAGATE_BOOTSTRAP_KEY,
    bootstrapAdminKey: s.MEDIAGATE_BOOTSTRAP_ADMIN_KEY,
    sandboxTiming: s.MEDIAGATE_SANDBOX_TIMING,
    allowPrivateUrls: s.MEDIAGATE_ALLOW_PRIVATE_URLS,
    logLevel: s.MEDIAGATE_LOG_LEVEL,
    signingSecret: s.MEDIAGATE_SIGNING_SECRET,
    workers: role === 'worker' || (role === 'all' && s.MEDIAGATE_WORKERS),
    role,
    workerConcurrency: s.MEDIAGATE_WORKER_CONCURRENCY,
    heapGrowingPercent: s.MEDIAGATE_HEAP_GROWING_PERCENT,
    maxAttempts: s.MEDIAGATE_MAX_ATTEMPTS,
    leaseMs: s.MEDIAGATE_LEASE_SECONDS * 1000,
    shutdownGraceMs: s.MEDIAGATE_SHUTDOWN_GRACE_SECONDS * 1000,
    bodyLimit: s.MEDIAGATE_BODY_LIMIT,
    videosResultTtlHours: s.MEDIAGATE_VIDEOS_RESULT_TTL_HOURS,
    queueTtlHours: s.MEDIAGATE_QUEUE_TTL_HOURS,
    rateLimits: s.MEDIAGATE_RATE_LIMIT === 'off' ? undefined : { submitRate: s.MEDIAGATE_RATE_LIMIT_SUBMITS, queryRate: s.MEDIAGATE_RATE_LIMIT_QUERIES },
    attemptTimeoutMs: s.MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS * 1000,
    unavailableFailMs: s.MEDIAGATE_UNAVAILABLE_FAIL_SECONDS * 1000,
    maxTasksInFlight: s.MEDIAGATE_MAX_TASKS_IN_FLIGHT,
    assetMaxBytes: s.MEDIAGATE_ASSET_MAX_BYTES,
    assetQuotaBytes: s.MEDIAGATE_ASSET_QUOTA_BYTES,
    assetTtlHours: s.MEDIAGATE_ASSET_TTL_HOURS,
    mediaReviewTimeoutMs: s.MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS,
    mediaBudget: {
      slots: s.MEDIAGATE_MEDIA_REVIEW_SLOTS,
      keySlots: s.MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS,
      bytes: s.MEDIAGATE_MEDIA_BYTES_IN_FLIGHT,
      keyBytes: s.MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT,
    },
    modelRoutes: s.MEDIAGATE_MODEL_ROUTES,
    sandboxChatTokensPerSecond: s.MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND,
    chatHeartbeatMs: s.MEDIAGATE_CHAT_HEARTBEAT_MS,
    maxConnections: s.MEDIAGATE_MAX_CONNECTIONS,
    minFreeDiskBytes: s.MEDIAGATE_MIN_FREE_DISK_MB * 1_048_576,
    headersTimeoutMs: s.MEDIAGATE_HEADERS_TIMEOUT_SECONDS * 1000,
    s3:
      s.MEDIAGATE_S3_BUCKET === undefined
        ? undefined
        : {
            bucket: s.MEDIAGATE_S3_BUCKET,
            endpoint: s.MEDIAGATE_S3_ENDPOINT,
            region: s.MEDIAGATE_S3_REGION,
            forcePathStyle: s.MEDIAGATE_S3_FORCE_PATH_STYLE,
            prefix: s.MEDIAGATE_S3_PREFIX,
            createBucket: s.MEDIAGATE_S3_CREATE_BUCKET,
          },
    filesRedirect: s.MEDIAGATE_FILES_REDIRECT,
    consoleSessionMs: s.MEDIAGATE_CONSOLE_SESSION_HOURS * MS_PER_HOUR,
    credits: {
      enforce: s.MEDIAGATE_CREDITS === 'on',
      startingMicro: s.MEDIAGATE_STARTING_CREDITS,
      prices: s.MEDIAGATE_PRICES,
      chatHoldTokens: s.MEDIAGATE_CHAT_HOLD_TOKENS,
    },
    webhooks: {
      timeoutMs: s.MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS * 1000,
      firstRetryMs: s.MEDIAGATE_WEBHOOK_RETRY_SECONDS * 1000,
      maxRetryMs: s.MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS * 1000,
      retryForMs: s.MEDIAGATE_WEBHOOK_RETRY_HOURS * MS_PER_HOUR,
    },
    observability: readObservability(env),
    variables: settingVariables(env, s),
  };
}
