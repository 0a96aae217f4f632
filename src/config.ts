import path from 'node:path';
import { readChatUpstreamSpecs, type ChatUpstreamSpec } from './chat/upstream-config.js';
import { ConfigError, type Env } from './config-error.js';
import { readProvidersFile, type ProvidersConfig } from './providers/providers-file.js';
import { openFileLimit } from './resources.js';
import { parseCredits } from './credits/money.js';
import { readPrices, type PriceBook } from './credits/prices.js';
import { readObservability, type ObservabilitySettings } from './metrics/settings.js';

/**
 * The default connection cap: three quarters of the descriptors left after 256 for the gateway's
 * own files, pipes and upstream connections, at least 64 and at most 50,000 (1,024 descriptors: 576).
 */
export function defaultMaxConnections(fileLimit = openFileLimit() ?? 1024): number {
  return Math.max(64, Math.min(50_000, Math.floor((fileLimit - 256) * 0.75)));
}

/** How long the sandbox provider takes (decisions.md #26). */
export type SandboxTiming = 'instant' | 'fast' | 'realistic';

export interface Config {
  host: string;
  port: number;
  /** Absolute directory holding the SQLite database, result files and the signing secret. */
  dataDir: string;
  /** The SQLite database file, `<dataDir>/mediagate.db`. */
  databaseFile: string;
  /** `MEDIAGATE_DATABASE_URL`: a PostgreSQL database instead of the SQLite file (G177). Holds credentials: never log it. */
  databaseUrl?: string;
  /** `MEDIAGATE_REDIS_URL`: rate-limit counts in Redis, shared by every process (G196). Holds credentials: never log it. */
  redisUrl?: string;
  /** `full` fsyncs every SQLite commit (survives power loss); `normal` survives process crashes. */
  sqliteSync: 'normal' | 'full';
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
  bootstrapKey: string | undefined;
  /** `MEDIAGATE_BOOTSTRAP_ADMIN_KEY`: an admin key stored at start if absent (G300). A secret: never logged. */
  bootstrapAdminKey: string | undefined;
  sandboxTiming: SandboxTiming;
  allowPrivateUrls: boolean;
  logLevel: string;
  /** Secret for result URL signatures; undefined = generated once and kept in the data directory. */
  signingSecret: string | undefined;
  /** Run the task workers inside this process. */
  workers: boolean;
  /** What this process does (MEDIAGATE_ROLE, `serve --role`): `api` answers callers, `worker` runs tasks, `all` both (G163). */
  role: 'api' | 'worker' | 'all';
  /** Tasks one provider runs at once in this process. */
  workerConcurrency: number;
  /** V8's heap growing factor for this process, percent over the live heap (0: V8's own choice). */
  heapGrowingPercent: number;
  /** Attempts a task gets before it fails for good (a worker that dies mid-task costs one). */
  maxAttempts: number;
  /** Lease length; a worker renews at a third of it. A task whose lease lapses is returned to the queue. */
  leaseMs: number;
  /** Maximum request body, bytes. */
  bodyLimit: number;
  /** Retention of `videos` and Model Center results (decisions.md #20: "24 h unless configured"). */
  videosResultTtlHours: number;
  /** MEDIAGATE_QUEUE_TTL_HOURS: a task still queued this long after its submission fails, its hold released (G249); 0: never. */
  queueTtlHours: number;
  /** Generation speed of the sandbox chat provider, tokens per second; 0 = unlimited. */
  sandboxChatTokensPerSecond: number;
  /** A `: ping` comment is sent on a chat stream after this long without an event, ms. */
  chatHeartbeatMs: number;
  /** Longest one generation attempt may run, ms. */
  attemptTimeoutMs: number;
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
  /** Caller media fetched and checked at once (docs/API.md G100): slots and reserved bytes, per process and per key. */
  mediaBudget: { slots: number; keySlots: number; bytes: number; keyBytes: number };
  /** model -> provider id overrides, from `MEDIAGATE_MODEL_ROUTES` (`pic-2=sandbox,*=sandbox`). */
  modelRoutes: Record<string, string>;
  /** OpenAI-compatible chat upstreams (`MEDIAGATE_CHAT_CONFIG`, `MEDIAGATE_CHAT_UPSTREAM_*`), validated; keys inside. */
  chatUpstreams: ChatUpstreamSpec[];
  /** Providers and routes of `MEDIAGATE_PROVIDERS` (providers.json), validated; keys inside. Undefined: the shorthand settings apply. */
  providers: ProvidersConfig | undefined;
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

function webhookSetting(env: Env): WebhookSettings {
  const firstRetry = intSetting(env, 'MEDIAGATE_WEBHOOK_RETRY_SECONDS', 5, 1, 3600);
  return {
    timeoutMs: intSetting(env, 'MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS', 15, 1, 60) * 1000,
    firstRetryMs: firstRetry * 1000,
    maxRetryMs: intSetting(env, 'MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS', 3600, firstRetry, 86_400) * 1000,
    retryForMs: intSetting(env, 'MEDIAGATE_WEBHOOK_RETRY_HOURS', 24, 1, 720) * 3_600_000,
  };
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
}


function rateLimitSetting(env: Env): Config['rateLimits'] {
  const mode = env.MEDIAGATE_RATE_LIMIT ?? 'on';
  if (mode !== 'on' && mode !== 'off') throw new ConfigError('MEDIAGATE_RATE_LIMIT', `must be on or off, got "${mode}"`);
  if (mode === 'off') return undefined;
  return {
    submitRate: intSetting(env, 'MEDIAGATE_RATE_LIMIT_SUBMITS', 10, 1, 1_000_000),
    queryRate: intSetting(env, 'MEDIAGATE_RATE_LIMIT_QUERIES', 50, 1, 1_000_000),
  };
}

const MIB = 1_048_576;

/**
 * G100: slots and byte budgets for caller media. A key's budget must hold the largest single
 * medium (a 200 MiB reference video, or an asset upload) and fit in the process's.
 */
function mediaBudgetSetting(env: Env, assetMaxBytes: number): Config['mediaBudget'] {
  const slots = intSetting(env, 'MEDIAGATE_MEDIA_REVIEW_SLOTS', 16, 1, 1024);
  const keySlots = intSetting(env, 'MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS', Math.min(4, slots), 1, slots);
  const largest = Math.max(200 * MIB, assetMaxBytes);
  const keyBytes = intSetting(env, 'MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT', Math.max(600 * MIB, assetMaxBytes), 1, Number.MAX_SAFE_INTEGER);
  if (keyBytes < largest) {
    throw new ConfigError('MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT', `must be at least the largest single medium, ${largest} bytes (200 MiB or MEDIAGATE_ASSET_MAX_BYTES), got ${keyBytes}`);
  }
  const bytes = intSetting(env, 'MEDIAGATE_MEDIA_BYTES_IN_FLIGHT', Math.max(2048 * MIB, keyBytes), 1, Number.MAX_SAFE_INTEGER);
  if (bytes < keyBytes) throw new ConfigError('MEDIAGATE_MEDIA_BYTES_IN_FLIGHT', `must be at least MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT (${keyBytes}), got ${bytes}`);
  return { slots, keySlots, bytes, keyBytes };
}

/**
 * MEDIAGATE_QUEUE_TTL_HOURS (G249): 0, or at least every attempt's bound over every attempt, so
 * that a task retried as configured can never be expired between two of its attempts.
 */
function queueTtlSetting(env: Env, attempts: number, attemptTimeoutMs: number): number {
  const hours = intSetting(env, 'MEDIAGATE_QUEUE_TTL_HOURS', 24, 0, 24 * 365);
  const attemptSeconds = attemptTimeoutMs / 1000;
  const least = Math.ceil((attempts * attemptSeconds) / 3600);
  if (hours > 0 && hours < least) {
    throw new ConfigError('MEDIAGATE_QUEUE_TTL_HOURS', `must be 0 (never) or at least ${least} (MEDIAGATE_MAX_ATTEMPTS ${attempts} x MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS ${attemptSeconds}, in hours), got ${hours}`);
  }
  return hours;
}

function creditsSetting(env: Env): CreditsSettings {
  const raw = env.MEDIAGATE_STARTING_CREDITS;
  const startingMicro = raw ? parseCredits(raw) : 0;
  if (startingMicro === undefined || startingMicro < 0) throw new ConfigError('MEDIAGATE_STARTING_CREDITS', `must be a number of credits from 0 to 999999999.999999 (at most 6 decimals), got "${raw}"`);
  return {
    enforce: choiceSetting(env, 'MEDIAGATE_CREDITS', ['off', 'on'] as const, 'off') === 'on',
    startingMicro,
    prices: readPrices(env.MEDIAGATE_PRICES || undefined),
    chatHoldTokens: intSetting(env, 'MEDIAGATE_CHAT_HOLD_TOKENS', 4096, 1, 10_000_000),
  };
}

function intSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1 or 0 (true/false, on/off), got "${raw}"`);
}

function choiceSetting<const T extends readonly string[]>(env: Env, name: string, choices: T, fallback: T[number]): T[number] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!choices.includes(raw)) throw new ConfigError(name, `must be ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}, got "${raw}"`);
  return raw;
}

function prefixSetting(env: Env, name: string): string {
  const raw = (env[name] ?? '').trim();
  if (raw === '' || raw === '/') return '';
  if (!/^\/[A-Za-z0-9._~\-/]*[A-Za-z0-9._~-]$/.test(raw) || raw.includes('//')) {
    throw new ConfigError(name, `must be empty or a path like /power (no trailing slash), got "${raw}"`);
  }
  return raw;
}

function parseRoutes(raw: string | undefined): Record<string, string> {
  const routes: Record<string, string> = {};
  if (!raw) return routes;
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([^=\s]+)=([a-z][a-z0-9_-]*)$/.exec(part);
    if (!m) throw new ConfigError('MEDIAGATE_MODEL_ROUTES', `entries look like model=provider, got "${part}"`);
    routes[m[1]!] = m[2]!;
  }
  return routes;
}

function tokensPerSecondSetting(env: Env, name: string, fallback: number): number {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw === 'unlimited') return 0;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must be a number of tokens per second (0 or "unlimited" for no limit), got "${env[name]}"`);
  const value = Number(raw);
  if (value > 1_000_000) throw new ConfigError(name, `must be at most 1000000, got ${value}`);
  return value;
}

const S3_ONLY = ['MEDIAGATE_S3_ENDPOINT', 'MEDIAGATE_S3_REGION', 'MEDIAGATE_S3_FORCE_PATH_STYLE', 'MEDIAGATE_S3_PREFIX', 'MEDIAGATE_FILES_REDIRECT'] as const;

/**
 * G171: the bucket settings. Any of the others without `MEDIAGATE_S3_BUCKET` is refused (a typo in
 * the bucket's name would otherwise store everything on the local disk without a word).
 */
function s3Setting(env: Env): S3Settings | undefined {
  const bucket = (env.MEDIAGATE_S3_BUCKET ?? '').trim();
  if (bucket === '') {
    const orphan = S3_ONLY.find((name) => (env[name] ?? '') !== '');
    if (orphan) throw new ConfigError(orphan, 'only applies with MEDIAGATE_S3_BUCKET, which is not set');
    return undefined;
  }
  // S3's rules (3-63 characters, lower case, digits, dots, hyphens), widened to the legacy
  // us-east-1 names (upper case, underscores, up to 255) that S3-compatible services also accept.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/.test(bucket) || bucket.includes('..')) {
    throw new ConfigError('MEDIAGATE_S3_BUCKET', `must be a bucket name (3-255 letters, digits, ".", "-", "_"; starting and ending with a letter or digit), got "${bucket}"`);
  }
  const endpointRaw = (env.MEDIAGATE_S3_ENDPOINT ?? '').trim();
  let endpoint: string | undefined;
  if (endpointRaw !== '') {
    let url: URL;
    try {
      url = new URL(endpointRaw);
    } catch {
      throw new ConfigError('MEDIAGATE_S3_ENDPOINT', `must be an absolute http(s) URL like https://s3.example.com, got "${endpointRaw}"`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
      throw new ConfigError('MEDIAGATE_S3_ENDPOINT', 'must be an absolute http(s) URL without credentials, query or fragment (credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile or a role)');
    }
    endpoint = endpointRaw.replace(/\/+$/, '');
  }
  const regionRaw = (env.MEDIAGATE_S3_REGION ?? '').trim();
  if (regionRaw !== '' && !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(regionRaw)) {
    throw new ConfigError('MEDIAGATE_S3_REGION', `must be a region name like eu-west-1 (letters, digits, "-", "_"), got "${regionRaw}"`);
  }
  const region = regionRaw !== '' ? regionRaw : endpoint !== undefined ? 'us-east-1' : undefined;
  return { bucket, endpoint, region, forcePathStyle: boolSetting(env, 'MEDIAGATE_S3_FORCE_PATH_STYLE', false), prefix: s3PrefixSetting(env) };
}

/** `MEDIAGATE_S3_PREFIX`: path segments of S3's safe characters, no `.`/`..` segment, no leading `/`; stored ending in `/`. */
function s3PrefixSetting(env: Env): string {
  const raw = (env.MEDIAGATE_S3_PREFIX ?? '').trim();
  if (raw === '') return '';
  const prefix = raw.endsWith('/') ? raw : `${raw}/`;
  const segments = prefix.slice(0, -1).split('/');
  if (prefix.length > 512 || segments.some((seg) => !/^[A-Za-z0-9!_.*'()-]+$/.test(seg) || seg === '.' || seg === '..')) {
    throw new ConfigError('MEDIAGATE_S3_PREFIX', `must be a key prefix like mediagate or envs/prod (letters, digits and !_.*'()- in "/"-separated segments, no leading "/", empty, "." or ".." segments, at most 512 characters), got "${raw}"`);
  }
  return prefix;
}

/**
 * G177: `MEDIAGATE_DATABASE_URL`, a `postgres://` or `postgresql://` URL (user, password, host,
 * port, database and query options as libpq reads them; parts left out take libpq's defaults);
 * empty or unset: the SQLite file. The
 * message of a bad value never repeats it (it may hold a password).
 */
function databaseUrlSetting(env: Env): string | undefined {
  return serviceUrlSetting(env, 'MEDIAGATE_DATABASE_URL', ['postgres:', 'postgresql:'],
    'must be a PostgreSQL URL like postgres://user:password@host:5432/mediagate (scheme postgres:// or postgresql://, no #fragment)');
}

/**
 * G196: `MEDIAGATE_REDIS_URL`, `redis://[user:password@]host:6379[/db]` or `rediss://` (TLS):
 * per-key rate-limit counts in Redis, shared by every process using it. Unset: the PostgreSQL
 * store's database when there is one, else each process's memory.
 */
function redisUrlSetting(env: Env): string | undefined {
  return serviceUrlSetting(env, 'MEDIAGATE_REDIS_URL', ['redis:', 'rediss:'],
    'must be a Redis URL like redis://:password@host:6379/0 (scheme redis:// or rediss://, no #fragment)');
}

/** A service URL setting (it may hold a password: a bad value's message never repeats it); empty or unset: undefined. */
function serviceUrlSetting(env: Env, name: string, schemes: readonly string[], rule: string): string | undefined {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return undefined;
  if (!isServiceUrl(raw, schemes)) throw new ConfigError(name, rule);
  return raw;
}

/** A `postgres://` or `postgresql://` URL without a #fragment (what MEDIAGATE_DATABASE_URL and `migrate-store --to` take). */
export function isPostgresUrl(raw: string): boolean {
  return isServiceUrl(raw, ['postgres:', 'postgresql:']);
}

/** A URL of one of these schemes (`postgres:`), without a #fragment. */
function isServiceUrl(raw: string, schemes: readonly string[]): boolean {
  try {
    const url = new URL(raw);
    return schemes.includes(url.protocol) && !url.hash;
  } catch {
    return false;
  }
}

/** Reads and validates every setting once; a bad value throws a ConfigError naming it. */
export function loadConfig(env: Env = process.env): Config {
  const port = intSetting(env, 'PORT', 8790, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const publicUrlRaw = env.MEDIAGATE_PUBLIC_URL || `http://localhost:${port}`;
  let publicUrl: string;
  try {
    const u = new URL(publicUrlRaw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    publicUrl = publicUrlRaw.replace(/\/+$/, '');
  } catch {
    throw new ConfigError('MEDIAGATE_PUBLIC_URL', `must be an absolute http(s) URL, got "${publicUrlRaw}"`);
  }
  const timing = choiceSetting(env, 'MEDIAGATE_SANDBOX_TIMING', ['instant', 'fast', 'realistic'] as const, 'fast');
  const logLevel = choiceSetting(env, 'MEDIAGATE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info');
  const bootstrapKey = env.MEDIAGATE_BOOTSTRAP_KEY || undefined;
  if (bootstrapKey !== undefined && !/^[\x21-\x7e]{16,200}$/.test(bootstrapKey)) {
    throw new ConfigError('MEDIAGATE_BOOTSTRAP_KEY', 'must be 16 to 200 printable characters without spaces');
  }
  const bootstrapAdminKey = env.MEDIAGATE_BOOTSTRAP_ADMIN_KEY || undefined;
  if (bootstrapAdminKey !== undefined && !/^[\x21-\x7e]{16,200}$/.test(bootstrapAdminKey)) {
    throw new ConfigError('MEDIAGATE_BOOTSTRAP_ADMIN_KEY', 'must be 16 to 200 printable characters without spaces');
  }
  if (bootstrapAdminKey !== undefined && bootstrapAdminKey === bootstrapKey) {
    throw new ConfigError('MEDIAGATE_BOOTSTRAP_ADMIN_KEY', 'must differ from MEDIAGATE_BOOTSTRAP_KEY: one key cannot be both a caller key and an admin key');
  }
  const signingSecret = env.MEDIAGATE_SIGNING_SECRET || undefined;
  if (signingSecret !== undefined && signingSecret.length < 32) {
    throw new ConfigError('MEDIAGATE_SIGNING_SECRET', 'must be at least 32 characters');
  }
  const providerCallbacks = boolSetting(env, 'MEDIAGATE_PROVIDER_CALLBACKS', false);
  if (providerCallbacks && !env.MEDIAGATE_PUBLIC_URL) {
    throw new ConfigError('MEDIAGATE_PROVIDER_CALLBACKS', 'needs MEDIAGATE_PUBLIC_URL: the public origin at which upstreams reach this gateway (callbacks go to <MEDIAGATE_PUBLIC_URL>/v1/provider-callbacks/...)');
  }
  const role = choiceSetting(env, 'MEDIAGATE_ROLE', ['api', 'worker', 'all'] as const, 'all');
  const workers = boolSetting(env, 'MEDIAGATE_WORKERS', role !== 'api');
  if (role === 'worker' && !workers) throw new ConfigError('MEDIAGATE_WORKERS', 'cannot be 0 in a process whose MEDIAGATE_ROLE (--role) is worker: it would do nothing');
  const dataDir = path.resolve(env.MEDIAGATE_DATA_DIR || './data');
  const databaseUrl = databaseUrlSetting(env);
  const redisUrl = redisUrlSetting(env);
  const assetMaxBytes = intSetting(env, 'MEDIAGATE_ASSET_MAX_BYTES', 200 * 1_048_576, 1024, 2048 * 1_048_576);
  const maxAttempts = intSetting(env, 'MEDIAGATE_MAX_ATTEMPTS', 3, 1, 20);
  const attemptTimeoutMs = intSetting(env, 'MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS', 1800, 1, 86_400) * 1000;
  return {
    host,
    port,
    dataDir,
    databaseFile: path.join(dataDir, 'mediagate.db'),
    ...(databaseUrl !== undefined && { databaseUrl }),
    ...(redisUrl !== undefined && { redisUrl }),
    sqliteSync: choiceSetting(env, 'MEDIAGATE_SQLITE_SYNC', ['normal', 'full'] as const, 'normal'),
    publicUrl,
    providerCallbacks,
    powerPrefix: prefixSetting(env, 'MEDIAGATE_POWER_PREFIX'),
    apiPrefix: prefixSetting(env, 'MEDIAGATE_API_PREFIX'),
    bootstrapKey,
    bootstrapAdminKey,
    sandboxTiming: timing,
    allowPrivateUrls: boolSetting(env, 'MEDIAGATE_ALLOW_PRIVATE_URLS', false),
    logLevel,
    signingSecret,
    workers: role === 'worker' || (role === 'all' && workers),
    role,
    workerConcurrency: intSetting(env, 'MEDIAGATE_WORKER_CONCURRENCY', 4, 1, 256),
    heapGrowingPercent: intSetting(env, 'MEDIAGATE_HEAP_GROWING_PERCENT', 60, 0, 1000),
    maxAttempts,
    leaseMs: intSetting(env, 'MEDIAGATE_LEASE_SECONDS', 30, 2, 3600) * 1000,
    bodyLimit: intSetting(env, 'MEDIAGATE_BODY_LIMIT', 1_048_576, 1024, 64 * 1_048_576),
    videosResultTtlHours: intSetting(env, 'MEDIAGATE_VIDEOS_RESULT_TTL_HOURS', 24, 1, 24 * 365),
    queueTtlHours: queueTtlSetting(env, maxAttempts, attemptTimeoutMs),
    rateLimits: rateLimitSetting(env),
    attemptTimeoutMs,
    maxTasksInFlight: intSetting(env, 'MEDIAGATE_MAX_TASKS_IN_FLIGHT', 500, 0, 10_000_000),
    assetMaxBytes,
    assetQuotaBytes: intSetting(env, 'MEDIAGATE_ASSET_QUOTA_BYTES', 1024 * 1_048_576, 1024, Number.MAX_SAFE_INTEGER),
    assetTtlHours: intSetting(env, 'MEDIAGATE_ASSET_TTL_HOURS', 168, 1, 24 * 365),
    mediaReviewTimeoutMs: intSetting(env, 'MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS', 60_000, 1000, 600_000),
    mediaBudget: mediaBudgetSetting(env, assetMaxBytes),
    modelRoutes: parseRoutes(env.MEDIAGATE_MODEL_ROUTES),
    sandboxChatTokensPerSecond: tokensPerSecondSetting(env, 'MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND', 50),
    chatHeartbeatMs: intSetting(env, 'MEDIAGATE_CHAT_HEARTBEAT_MS', 15_000, 10, 600_000),
    chatUpstreams: readChatUpstreamSpecs(env),
    providers: readProvidersFile(env),
    maxConnections: intSetting(env, 'MEDIAGATE_MAX_CONNECTIONS', defaultMaxConnections(), 1, 1_000_000),
    minFreeDiskBytes: intSetting(env, 'MEDIAGATE_MIN_FREE_DISK_MB', 512, 0, 10_000_000) * 1_048_576,
    headersTimeoutMs: intSetting(env, 'MEDIAGATE_HEADERS_TIMEOUT_SECONDS', 10, 1, 60) * 1000,
    s3: s3Setting(env),
    filesRedirect: boolSetting(env, 'MEDIAGATE_FILES_REDIRECT', false),
    credits: creditsSetting(env),
    webhooks: webhookSetting(env),
    observability: readObservability(env),
  };
}
