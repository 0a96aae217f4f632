import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { defaultMaxConnections, loadConfig } from './config.js';

/** Every setting with a value that is not its default, and what the configuration must hold then. */
const EVERY_SETTING: Record<string, [string, Record<string, unknown>]> = {
  PORT: ['9000', { port: 9000 }],
  HOST: ['127.0.0.1', { host: '127.0.0.1' }],
  MEDIAGATE_DATA_DIR: ['/tmp/x', { dataDir: '/tmp/x', databaseFile: '/tmp/x/mediagate.db' }],
  MEDIAGATE_PUBLIC_URL: ['https://m.example.com/', { publicUrl: 'https://m.example.com' }],
  MEDIAGATE_PROVIDER_CALLBACKS: ['1', { providerCallbacks: true }],
  MEDIAGATE_POWER_PREFIX: ['/power', { powerPrefix: '/power' }],
  MEDIAGATE_API_PREFIX: ['/api', { apiPrefix: '/api' }],
  MEDIAGATE_BOOTSTRAP_KEY: ['k'.repeat(20), { bootstrapKey: 'k'.repeat(20) }],
  MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ['a'.repeat(20), { bootstrapAdminKey: 'a'.repeat(20) }],
  MEDIAGATE_SANDBOX_TIMING: ['realistic', { sandboxTiming: 'realistic' }],
  MEDIAGATE_ALLOW_PRIVATE_URLS: ['1', { allowPrivateUrls: true }],
  MEDIAGATE_MODEL_ROUTES: ['pic-2=sandbox,*=sandbox', { modelRoutes: { 'pic-2': 'sandbox', '*': 'sandbox' } }],
  MEDIAGATE_LOG_LEVEL: ['warn', { logLevel: 'warn' }],
  MEDIAGATE_SIGNING_SECRET: ['s'.repeat(40), { signingSecret: 's'.repeat(40) }],
  MEDIAGATE_WORKERS: ['0', { workers: false }],
  MEDIAGATE_WORKER_CONCURRENCY: ['7', { workerConcurrency: 7 }],
  MEDIAGATE_HEAP_GROWING_PERCENT: ['0', { heapGrowingPercent: 0 }],
  MEDIAGATE_MAX_ATTEMPTS: ['5', { maxAttempts: 5 }],
  MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS: ['90', { attemptTimeoutMs: 90_000 }],
  MEDIAGATE_LEASE_SECONDS: ['12', { leaseMs: 12_000 }],
  MEDIAGATE_SHUTDOWN_GRACE_SECONDS: ['40', { shutdownGraceMs: 40_000 }],
  MEDIAGATE_BODY_LIMIT: ['2048', { bodyLimit: 2048 }],
  MEDIAGATE_VIDEOS_RESULT_TTL_HOURS: ['48', { videosResultTtlHours: 48 }],
  MEDIAGATE_SQLITE_SYNC: ['full', { sqliteSync: 'full' }],
  MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: ['unlimited', { sandboxChatTokensPerSecond: 0 }],
  MEDIAGATE_RATE_LIMIT_SUBMITS: ['4', { rateLimits: { submitRate: 4, queryRate: 6 } }],
  MEDIAGATE_RATE_LIMIT_QUERIES: ['6', { rateLimits: { submitRate: 4, queryRate: 6 } }],
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: ['9', { maxTasksInFlight: 9 }],
  MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS: ['5000', { mediaReviewTimeoutMs: 5000 }],
  MEDIAGATE_ASSET_MAX_BYTES: ['4096', { assetMaxBytes: 4096 }],
  MEDIAGATE_ASSET_QUOTA_BYTES: ['8192', { assetQuotaBytes: 8192 }],
  MEDIAGATE_ASSET_TTL_HOURS: ['3', { assetTtlHours: 3 }],
  MEDIAGATE_MEDIA_REVIEW_SLOTS: ['8', { mediaBudget: expect.objectContaining({ slots: 8 }) }],
  MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: ['3', { mediaBudget: expect.objectContaining({ keySlots: 3 }) }],
  MEDIAGATE_MEDIA_BYTES_IN_FLIGHT: ['900000000', { mediaBudget: expect.objectContaining({ bytes: 900_000_000 }) }],
  MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: ['300000000', { mediaBudget: expect.objectContaining({ keyBytes: 300_000_000 }) }],
  MEDIAGATE_CHAT_HEARTBEAT_MS: ['2500', { chatHeartbeatMs: 2500 }],
  MEDIAGATE_MAX_CONNECTIONS: ['300', { maxConnections: 300 }],
  MEDIAGATE_MIN_FREE_DISK_MB: ['2048', { minFreeDiskBytes: 2048 * 1_048_576 }],
  MEDIAGATE_HEADERS_TIMEOUT_SECONDS: ['5', { headersTimeoutMs: 5000 }],
  MEDIAGATE_S3_BUCKET: ['media-results', { s3: expect.objectContaining({ bucket: 'media-results' }) }],
  MEDIAGATE_S3_ENDPOINT: ['http://127.0.0.1:9000/', { s3: expect.objectContaining({ endpoint: 'http://127.0.0.1:9000' }) }],
  MEDIAGATE_S3_REGION: ['eu-west-3', { s3: expect.objectContaining({ region: 'eu-west-3' }) }],
  MEDIAGATE_S3_FORCE_PATH_STYLE: ['1', { s3: expect.objectContaining({ forcePathStyle: true }) }],
  MEDIAGATE_S3_PREFIX: ['envs/prod', { s3: expect.objectContaining({ prefix: 'envs/prod/' }) }],
  MEDIAGATE_S3_CREATE_BUCKET: ['1', { s3: expect.objectContaining({ createBucket: true }) }],
  MEDIAGATE_FILES_REDIRECT: ['1', { filesRedirect: true }],
  MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS: ['3', { webhooks: expect.objectContaining({ timeoutMs: 3000 }) }],
  MEDIAGATE_WEBHOOK_RETRY_SECONDS: ['2', { webhooks: expect.objectContaining({ firstRetryMs: 2000 }) }],
  MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS: ['600', { webhooks: expect.objectContaining({ maxRetryMs: 600_000 }) }],
  MEDIAGATE_WEBHOOK_RETRY_HOURS: ['48', { webhooks: expect.objectContaining({ retryForMs: 48 * 3_600_000 }) }],
  MEDIAGATE_ROLE: ['api', { role: 'api', workers: false }],
  MEDIAGATE_DATABASE_URL: ['postgres://mg:pw@db.internal:5432/mediagate', { databaseUrl: 'postgres://mg:pw@db.internal:5432/mediagate' }],
  MEDIAGATE_CHAT_UPSTREAM_URL: ['http://127.0.0.1:9/v1', { chatUpstreams: [expect.objectContaining({ name: 'env', baseUrl: 'http://127.0.0.1:9/v1' })] }],
  MEDIAGATE_CHAT_UPSTREAM_KEY: ['sk-test', { chatUpstreams: [expect.objectContaining({ apiKey: 'sk-test' })] }],
  MEDIAGATE_CHAT_UPSTREAM_MODELS: ['*=llama3', { chatUpstreams: [expect.objectContaining({ models: expect.objectContaining({ 'chat-2.5-pro': 'llama3' }) })] }],
  MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS: ['60000', { chatUpstreams: [expect.objectContaining({ timeoutMs: 60_000 })] }],
  MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS: ['2000', { chatUpstreams: [expect.objectContaining({ stallTimeoutMs: 2000 })] }],
  MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS: ['3000', { chatUpstreams: [expect.objectContaining({ connectTimeoutMs: 3000 })] }],
  MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM: ['max_tokens', { chatUpstreams: [expect.objectContaining({ maxTokensParam: 'max_tokens' })] }],
};

describe('configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8790,
      host: '0.0.0.0',
      dataDir: path.resolve('./data'),
      databaseFile: path.resolve('./data/mediagate.db'),
      publicUrl: 'http://localhost:8790',
      providerCallbacks: false,
      powerPrefix: '',
      apiPrefix: '',
      bootstrapKey: undefined,
      sandboxTiming: 'fast',
      allowPrivateUrls: false,
      logLevel: 'info',
      signingSecret: undefined,
      workers: true,
      role: 'all',
      workerConcurrency: 4,
      heapGrowingPercent: 60,
      maxAttempts: 3,
      attemptTimeoutMs: 1_800_000,
      leaseMs: 30_000,
      shutdownGraceMs: 25_000,
      bodyLimit: 1_048_576,
      videosResultTtlHours: 24,
      sqliteSync: 'normal',
      sandboxChatTokensPerSecond: 50,
      rateLimits: { submitRate: 10, queryRate: 50 },
      maxTasksInFlight: 500,
      mediaReviewTimeoutMs: 60_000,
      assetMaxBytes: 209_715_200,
      assetQuotaBytes: 1_073_741_824,
      assetTtlHours: 168,
      chatHeartbeatMs: 15_000,
      modelRoutes: {},
      chatUpstreams: [],
      minFreeDiskBytes: 512 * 1_048_576,
      headersTimeoutMs: 10_000,
      mediaBudget: { slots: 16, keySlots: 4, bytes: 2_147_483_648, keyBytes: 629_145_600 },
      s3: undefined,
      filesRedirect: false,
    });
  });

  it('the bucket (G171): region us-east-1 with an endpoint, else the SDK chain; the prefix ends in /; the others need the bucket', () => {
    expect(loadConfig({ MEDIAGATE_S3_BUCKET: 'b1b', MEDIAGATE_S3_ENDPOINT: 'https://s3.example.com' }).s3).toEqual({
      bucket: 'b1b',
      endpoint: 'https://s3.example.com',
      region: 'us-east-1',
      forcePathStyle: false,
      prefix: '',
      createBucket: false,
    });
    expect(loadConfig({ MEDIAGATE_S3_BUCKET: 'b1b' }).s3).toEqual({
      bucket: 'b1b',
      endpoint: undefined,
      region: undefined,
      forcePathStyle: false,
      prefix: '',
      createBucket: false,
    });
    expect(loadConfig({ MEDIAGATE_S3_BUCKET: 'b1b', MEDIAGATE_S3_PREFIX: 'mediagate/' }).s3?.prefix).toBe('mediagate/');
    for (const name of [
      'MEDIAGATE_S3_ENDPOINT',
      'MEDIAGATE_S3_REGION',
      'MEDIAGATE_S3_FORCE_PATH_STYLE',
      'MEDIAGATE_S3_PREFIX',
      'MEDIAGATE_S3_CREATE_BUCKET',
      'MEDIAGATE_FILES_REDIRECT',
    ]) {
      expect(() => loadConfig({ [name]: name === 'MEDIAGATE_S3_ENDPOINT' ? 'http://127.0.0.1:9000' : '1' }), name).toThrow(
        `${name}: only applies with MEDIAGATE_S3_BUCKET, which is not set`,
      );
    }
  });

  it.each([
    ['MEDIAGATE_S3_BUCKET', 'ab'],
    ['MEDIAGATE_S3_BUCKET', 'my bucket'],
    ['MEDIAGATE_S3_BUCKET', 'a..b'],
    ['MEDIAGATE_S3_BUCKET', '-abc'],
    ['MEDIAGATE_S3_ENDPOINT', 'minio:9000'],
    ['MEDIAGATE_S3_ENDPOINT', 'ftp://x'],
    ['MEDIAGATE_S3_ENDPOINT', 'https://user:secret@s3.example.com'],
    ['MEDIAGATE_S3_REGION', 'eu west'],
    ['MEDIAGATE_S3_FORCE_PATH_STYLE', 'maybe'],
    ['MEDIAGATE_S3_CREATE_BUCKET', 'yes please'],
    ['MEDIAGATE_FILES_REDIRECT', 'sometimes'],
    ['MEDIAGATE_S3_PREFIX', '/abs'],
    ['MEDIAGATE_S3_PREFIX', 'a//b'],
    ['MEDIAGATE_S3_PREFIX', 'a/../b'],
    ['MEDIAGATE_S3_PREFIX', 'sp ace'],
  ])('a bad %s (%s) stops the start with a message naming it, never echoing a credential', (name, value) => {
    const env = { MEDIAGATE_S3_BUCKET: 'media-results', [name]: value };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${name}: `));
    if (value.includes('secret')) expect(() => loadConfig(env)).not.toThrow(/secret/);
  });

  it('webhooks (G211, G212): 15 s attempts, 5 s doubling to 1 h for 24 h; the longest wait cannot be below the first', () => {
    expect(loadConfig({}).webhooks).toEqual({ timeoutMs: 15_000, firstRetryMs: 5000, maxRetryMs: 3_600_000, retryForMs: 86_400_000 });
    expect(() => loadConfig({ MEDIAGATE_WEBHOOK_RETRY_SECONDS: '60', MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS: '30' })).toThrow(
      /MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS: must be between 60 and 86400/,
    );
    expect(() => loadConfig({ MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS: '0' })).toThrow(/MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS/);
  });

  it('the queue TTL (G249): 24 h by default, 0 for never, never shorter than every attempt over every attempt', () => {
    expect(loadConfig({}).queueTtlHours).toBe(24);
    expect(loadConfig({ MEDIAGATE_QUEUE_TTL_HOURS: '0' }).queueTtlHours).toBe(0);
    expect(loadConfig({ MEDIAGATE_QUEUE_TTL_HOURS: '2' }).queueTtlHours).toBe(2); // 3 x 1800 s = 1.5 h
    expect(() => loadConfig({ MEDIAGATE_QUEUE_TTL_HOURS: '1' })).toThrow(/^MEDIAGATE_QUEUE_TTL_HOURS: must be 0 \(never\) or at least 2 /);
    expect(() => loadConfig({ MEDIAGATE_QUEUE_TTL_HOURS: '24', MEDIAGATE_MAX_ATTEMPTS: '5', MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS: '86400' })).toThrow(
      /at least 120 /,
    );
    expect(() => loadConfig({ MEDIAGATE_QUEUE_TTL_HOURS: '-1' })).toThrow(/^MEDIAGATE_QUEUE_TTL_HOURS: /);
  });

  it('roles (G163): api never runs workers, worker always does; a worker told to run none, or an unknown role, stops the start', () => {
    expect(loadConfig({ MEDIAGATE_ROLE: 'api', MEDIAGATE_WORKERS: '1' })).toMatchObject({ role: 'api', workers: false });
    expect(loadConfig({ MEDIAGATE_ROLE: 'worker' })).toMatchObject({ role: 'worker', workers: true });
    expect(loadConfig({ MEDIAGATE_WORKERS: '0' })).toMatchObject({ role: 'all', workers: false });
    expect(() => loadConfig({ MEDIAGATE_ROLE: 'worker', MEDIAGATE_WORKERS: '0' })).toThrow(/^MEDIAGATE_WORKERS: cannot be 0 .* worker/);
    expect(() => loadConfig({ MEDIAGATE_ROLE: 'poller' })).toThrow(/^MEDIAGATE_ROLE: /);
  });

  it('media budgets: a key budget holds the largest single medium and fits in the process budget (G100)', () => {
    // a larger asset limit raises the default key budget with it
    expect(loadConfig({ MEDIAGATE_ASSET_MAX_BYTES: String(1024 * 1_048_576) }).mediaBudget).toMatchObject({ keyBytes: 1_073_741_824, bytes: 2_147_483_648 });
    expect(loadConfig({ MEDIAGATE_MEDIA_REVIEW_SLOTS: '2' }).mediaBudget).toMatchObject({ slots: 2, keySlots: 2 });
    expect(() => loadConfig({ MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: '100000000' })).toThrow(
      'MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: must be at least the largest single medium, 209715200 bytes (200 MiB or MEDIAGATE_ASSET_MAX_BYTES), got 100000000',
    );
    expect(() => loadConfig({ MEDIAGATE_ASSET_MAX_BYTES: '300000000', MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: '250000000' })).toThrow(
      /^MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: .*300000000 bytes/,
    );
    expect(() => loadConfig({ MEDIAGATE_MEDIA_BYTES_IN_FLIGHT: '300000000' })).toThrow(
      'MEDIAGATE_MEDIA_BYTES_IN_FLIGHT: must be at least MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT (629145600), got 300000000',
    );
    expect(() => loadConfig({ MEDIAGATE_MEDIA_REVIEW_SLOTS: '4', MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: '5' })).toThrow(
      /^MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: must be between 1 and 4/,
    );
  });

  it('reads every setting', () => {
    const env = Object.fromEntries(Object.entries(EVERY_SETTING).map(([name, [value]]) => [name, value]));
    const config = loadConfig(env);
    for (const [name, [, expected]] of Object.entries(EVERY_SETTING)) {
      expect(config, name).toMatchObject(expected);
    }
  });

  it('the default connection cap follows the descriptor limit', () => {
    expect([1024, 4096, 65_536, 1_048_576, 100].map((n) => defaultMaxConnections(n))).toEqual([576, 2880, 48_960, 50_000, 64]);
    expect(loadConfig({}).maxConnections).toBe(defaultMaxConnections());
  });

  it('MEDIAGATE_PROVIDER_CALLBACKS needs an explicit MEDIAGATE_PUBLIC_URL: upstreams cannot reach localhost (G157)', () => {
    expect(() => loadConfig({ MEDIAGATE_PROVIDER_CALLBACKS: 'on' })).toThrow(/^MEDIAGATE_PROVIDER_CALLBACKS: needs MEDIAGATE_PUBLIC_URL/);
    expect(loadConfig({ MEDIAGATE_PROVIDER_CALLBACKS: 'on', MEDIAGATE_PUBLIC_URL: 'https://m.example.com' }).providerCallbacks).toBe(true);
  });

  it('MEDIAGATE_RATE_LIMIT=off turns the limits off', () => {
    expect(loadConfig({ MEDIAGATE_RATE_LIMIT: 'off' }).rateLimits).toBeUndefined();
  });

  it('MEDIAGATE_DATABASE_URL (G177): postgres:// or postgresql://, unset or empty for SQLite; a bad one is named, its password never echoed', () => {
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    expect(loadConfig({ MEDIAGATE_DATABASE_URL: '' }).databaseUrl).toBeUndefined();
    expect(loadConfig({ MEDIAGATE_DATABASE_URL: 'postgresql:///mediagate?host=/var/run/postgresql' }).databaseUrl).toBe(
      'postgresql:///mediagate?host=/var/run/postgresql',
    );
    for (const bad of ['mysql://u:secret@h/db', 'db.internal:5432', 'postgres://u:secret@h/db#x', 'sqlite:///data/mediagate.db']) {
      expect(() => loadConfig({ MEDIAGATE_DATABASE_URL: bad }), bad).toThrow(/^MEDIAGATE_DATABASE_URL: must be a PostgreSQL URL/);
      expect(() => loadConfig({ MEDIAGATE_DATABASE_URL: bad }), bad).not.toThrow(/secret/);
    }
  });

  it('MEDIAGATE_BOOTSTRAP_ADMIN_KEY must differ from MEDIAGATE_BOOTSTRAP_KEY (G300)', () => {
    expect(() => loadConfig({ MEDIAGATE_BOOTSTRAP_KEY: 'k'.repeat(20), MEDIAGATE_BOOTSTRAP_ADMIN_KEY: 'k'.repeat(20) })).toThrow(
      /^MEDIAGATE_BOOTSTRAP_ADMIN_KEY: must differ from MEDIAGATE_BOOTSTRAP_KEY/,
    );
  });

  it('the README documents every setting it reads', () => {
    const readme = fs.readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    for (const name of [...Object.keys(EVERY_SETTING), 'MEDIAGATE_RATE_LIMIT', 'MEDIAGATE_CHAT_CONFIG']) {
      expect(readme, name).toContain(`\`${name}\``);
    }
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['MEDIAGATE_PUBLIC_URL', 'not a url'],
    ['MEDIAGATE_PUBLIC_URL', 'ftp://x'],
    ['MEDIAGATE_POWER_PREFIX', 'power'],
    ['MEDIAGATE_API_PREFIX', '/api/'],
    ['MEDIAGATE_SANDBOX_TIMING', 'slow'],
    ['MEDIAGATE_ALLOW_PRIVATE_URLS', 'maybe'],
    ['MEDIAGATE_BOOTSTRAP_KEY', 'short'],
    ['MEDIAGATE_BOOTSTRAP_ADMIN_KEY', 'short'],
    ['MEDIAGATE_MODEL_ROUTES', 'pic-2'],
    ['MEDIAGATE_LOG_LEVEL', 'loud'],
    ['MEDIAGATE_SIGNING_SECRET', 'too-short'],
    ['MEDIAGATE_LEASE_SECONDS', '1'],
    ['MEDIAGATE_SQLITE_SYNC', 'FULL'],
    ['MEDIAGATE_SQLITE_SYNC', 'off'],
    ['MEDIAGATE_WORKERS', '2'],
    ['MEDIAGATE_RATE_LIMIT', 'maybe'],
    ['MEDIAGATE_PROVIDER_CALLBACKS', 'maybe'],
    ['MEDIAGATE_MAX_ATTEMPTS', '0'],
    ['MEDIAGATE_BODY_LIMIT', '10'],
    ['MEDIAGATE_CHAT_HEARTBEAT_MS', '5'],
    ['MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND', 'fast'],
    ['MEDIAGATE_WORKER_CONCURRENCY', '0'],
    ['MEDIAGATE_MAX_CONNECTIONS', '0'],
    ['MEDIAGATE_MIN_FREE_DISK_MB', 'lots'],
    ['MEDIAGATE_HEADERS_TIMEOUT_SECONDS', '0'],
    ['MEDIAGATE_MEDIA_REVIEW_SLOTS', '0'],
    ['MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS', '17'],
    ['MEDIAGATE_MEDIA_BYTES_IN_FLIGHT', 'lots'],
    ['MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT', '1024'],
    ['MEDIAGATE_SHUTDOWN_GRACE_SECONDS', '3601'],
    ['MEDIAGATE_SHUTDOWN_GRACE_SECONDS', '2.5'],
  ])('a bad %s (%s) stops the start with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});
