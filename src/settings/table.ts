/**
 * Every setting of the gateway, as data (G290): one row per environment variable with its type,
 * default, bounds and description. `readSettings` (read-settings.ts) reads and checks them,
 * config.ts builds the `Config` from the values, and `npm run docs` writes
 * docs/reference/settings.md from the rows (a test fails when that page is stale, and when src/
 * reads a variable this table lacks). Adding a setting is adding a row to its group.
 * Descriptions are markdown, linked relative to docs/reference/.
 */
import { ConfigError } from '../config-error.js';
import { readPrices } from '../credits/prices.js';
import { bool, choice, custom, group, int, onlyWith, readElsewhere } from './setting.js';
import {
  bootstrapKey,
  dataDir,
  defaultMaxConnections,
  modelRoutes,
  numberSetting,
  pathPrefix,
  publicUrl,
  s3Bucket,
  s3Endpoint,
  s3Prefix,
  s3Region,
  serviceUrl,
  signingSecret,
  startingCredits,
  tokensPerSecond,
} from './values.js';

const MIB = 1_048_576;
const HOURS_IN_A_YEAR = 24 * 365;

const SERVER = group('Server', {
  PORT: int({ default: 8790, min: 0, max: 65535, description: 'HTTP port to listen on; `0` picks a free one.' }),
  HOST: custom({ type: 'address', default: '`0.0.0.0`', rule: '', description: 'Interface to listen on.', parse: (_name, raw) => raw || '0.0.0.0' }),
  MEDIAGATE_PUBLIC_URL: custom({
    type: 'URL',
    default: '`http://localhost:<PORT>`',
    rule: 'absolute http(s) URL; trailing slashes are dropped',
    description:
      'Public base URL of the gateway (its origin, with a path prefix when a proxy serves it under one): `{base_url}`, used in every URL it hands out (results, signed inputs for upstreams, provider callbacks). Set it to the address callers (and upstreams) reach, e.g. `https://media.example.com`.',
    parse: publicUrl,
  }),
  MEDIAGATE_POWER_PREFIX: custom({
    type: 'path',
    default: 'empty',
    rule: 'empty or `/name` (no trailing slash)',
    description: 'Path prefix of `{power_base_url}` (the motion family), e.g. `/power` ([addresses](api/README.md#addresses)).',
    parse: pathPrefix,
  }),
  MEDIAGATE_API_PREFIX: custom({
    type: 'path',
    default: 'empty',
    rule: 'empty or `/name` (no trailing slash)',
    description: 'Path prefix of `{api_base_url}` (clip and reel Form A), e.g. `/api`.',
    parse: pathPrefix,
  }),
  MEDIAGATE_LOG_LEVEL: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    description:
      'JSON log lines on standard output, written asynchronously; at `info` one access-log line per request (method, route, status, ms, request id; never a key).',
  }),
  MEDIAGATE_BODY_LIMIT: int({
    default: MIB,
    min: 1024,
    max: 64 * MIB,
    unit: 'bytes',
    description: 'Largest request body; a larger one is a 413 `body_too_large`.',
  }),
  MEDIAGATE_MAX_CONNECTIONS: int({
    default: { doc: '3/4 of (`ulimit -n` - 256), 64 to 50,000 (576 at 1,024 descriptors)', value: () => defaultMaxConnections() },
    min: 1,
    max: 1_000_000,
    description: 'Client connections open at once; more are closed at once, so idle clients cannot use up the descriptors the gateway needs (G84).',
  }),
  MEDIAGATE_HEADERS_TIMEOUT_SECONDS: int({
    default: 10,
    min: 1,
    max: 60,
    unit: 'seconds',
    description:
      "A connection must send a request's headers within this long of its start or of its previous request, else it gets a 408 `request_timeout` and is closed (G84).",
  }),
  MEDIAGATE_HEAP_GROWING_PERCENT: int({
    default: 60,
    min: 0,
    max: 1000,
    unit: 'percent',
    description:
      "How far the JavaScript heap may grow past what is live before a full collection (V8's `--heap-growing-percent`); `0` leaves it to V8, which lets an I/O-bound gateway's heap grow to 2-4 times its live size (G162).",
  }),
});

const KEYS = group('Keys and caller URLs', {
  MEDIAGATE_BOOTSTRAP_KEY: custom({
    type: 'text',
    default: 'unset',
    rule: '16 to 200 printable characters without spaces',
    secret: true,
    description: 'An API key the gateway accepts, created at start if absent (D25): for scripts and containers.',
    parse: bootstrapKey,
  }),
  MEDIAGATE_BOOTSTRAP_ADMIN_KEY: custom({
    type: 'text',
    default: 'unset',
    rule: '16 to 200 printable characters without spaces; not the same as `MEDIAGATE_BOOTSTRAP_KEY`',
    secret: true,
    description: "An admin key (the operator's API, `/admin/v1/*`) the gateway accepts, created at start if absent (G300). It cannot submit tasks.",
    parse: (name, raw, ctx) => {
      const key = bootstrapKey(name, raw);
      if (key !== undefined && key === ctx.get('MEDIAGATE_BOOTSTRAP_KEY')) {
        throw new ConfigError(name, 'must differ from MEDIAGATE_BOOTSTRAP_KEY: one key cannot be both a caller key and an admin key');
      }
      return key;
    },
  }),
  MEDIAGATE_CONSOLE_SESSION_HOURS: int({
    default: 12,
    min: 1,
    max: 24 * 30,
    unit: 'hours',
    description:
      'How long a [web console](../guides/console.md) sign-in lasts: the session cookie and its record in the store expire this long after sign-in (G361).',
  }),
  MEDIAGATE_SIGNING_SECRET: custom({
    type: 'text',
    default: 'generated once into `<MEDIAGATE_DATA_DIR>/signing-secret`',
    rule: 'at least 32 characters',
    secret: true,
    description: 'HMAC secret of result and input URLs. Every process of one installation needs the same one ([running a cluster](../guides/cluster.md)).',
    parse: signingSecret,
  }),
  MEDIAGATE_ALLOW_PRIVATE_URLS: bool({
    default: false,
    description:
      '`1` lets caller media URLs, chat media URLs and webhook receivers be at loopback or private addresses (D27). For local testing and closed networks only.',
  }),
});

const PROCESSES = group('Processes and tasks', {
  MEDIAGATE_ROLE: choice(['api', 'worker', 'all'] as const, {
    default: 'all',
    description:
      'What this process does (also `mediagate serve --role`): `api` answers callers and runs no task, `worker` runs tasks and answers only `/healthz` and `/readyz`, `all` both (G163).',
  }),
  MEDIAGATE_WORKERS: bool({
    default: { doc: '`1`, or `0` with `MEDIAGATE_ROLE=api`', value: (ctx) => ctx.get('MEDIAGATE_ROLE') !== 'api' },
    check: {
      doc: 'not `0` with `MEDIAGATE_ROLE=worker`',
      test: (workers, ctx) =>
        ctx.get('MEDIAGATE_ROLE') === 'worker' && !workers
          ? 'cannot be 0 in a process whose MEDIAGATE_ROLE (--role) is worker: it would do nothing'
          : undefined,
    },
    description: '`0` makes a process of role `all` answer callers only, queueing tasks for workers elsewhere (the same as `MEDIAGATE_ROLE=api`).',
  }),
  MEDIAGATE_WORKER_CONCURRENCY: int({
    default: 4,
    min: 1,
    max: 256,
    description: 'Tasks one provider runs at once in this process; also the default `concurrency` of a provider in providers.json.',
  }),
  MEDIAGATE_MAX_ATTEMPTS: int({
    default: 3,
    min: 1,
    max: 20,
    description: "Attempts a task gets before it fails for good; a worker that dies mid-task costs one, the gateway's own faults none (G9, G84).",
  }),
  MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS: int({
    default: 1800,
    min: 1,
    max: 86_400,
    unit: 'seconds',
    description:
      'Longest one generation attempt may run (also a generation waiting at an upstream); then it is stopped and retried, or the task fails when out of attempts (G9c).',
  }),
  MEDIAGATE_UNAVAILABLE_FAIL_SECONDS: int({
    default: 1800,
    min: 1,
    max: 7 * 86_400,
    unit: 'seconds',
    description:
      'A task that waits in the queue because no upstream of its model takes calls (its query reply says `queue_reason: "upstream_unavailable"`) fails this long after it first found none, with a clear error and its credit hold released (G274).',
  }),
  MEDIAGATE_LEASE_SECONDS: int({
    default: 30,
    min: 2,
    max: 3600,
    unit: 'seconds',
    description: "A worker's lease on a task, renewed at a third of it; a task whose worker stops renewing returns to the queue after this long (G9).",
  }),
  MEDIAGATE_SHUTDOWN_GRACE_SECONDS: int({
    default: 25,
    min: 0,
    max: 3600,
    unit: 'seconds',
    description:
      'On SIGTERM, how long running generations and chat replies may go on; then a generation goes back to the queue without using an attempt and a chat stream ends (G342). Give the container or pod more than this to stop.',
  }),
  MEDIAGATE_QUEUE_TTL_HOURS: int({
    default: 24,
    min: 0,
    max: HOURS_IN_A_YEAR,
    unit: 'hours',
    check: {
      doc: '`0` or at least `MEDIAGATE_MAX_ATTEMPTS` x `MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS`, in hours rounded up',
      test: (hours, ctx) => {
        const attempts = numberSetting(ctx, 'MEDIAGATE_MAX_ATTEMPTS');
        const attemptSeconds = numberSetting(ctx, 'MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS');
        const least = Math.ceil((attempts * attemptSeconds) / 3600);
        return hours > 0 && hours < least
          ? `must be 0 (never) or at least ${least} (MEDIAGATE_MAX_ATTEMPTS ${attempts} x MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS ${attemptSeconds}, in hours), got ${hours}`
          : undefined;
      },
    },
    description:
      'A task still queued this long after its submit (no worker could start it) fails with "expired: ...", its credit hold released; `0`: never (G249).',
  }),
  MEDIAGATE_MIN_FREE_DISK_MB: int({
    default: 512,
    min: 0,
    max: 10_000_000,
    unit: 'MiB',
    description: 'Below this much free disk under the data directory `/readyz` answers 503 and no task is started (tasks wait); `0` turns the check off (G84).',
  }),
});

const STORAGE = group('Store', {
  MEDIAGATE_DATA_DIR: custom({
    type: 'path',
    default: '`./data`',
    rule: '',
    description:
      "The SQLite database, result files (unless `MEDIAGATE_S3_BUCKET`), the signing secret and each process's scratch folder ([backup and restore](../guides/backup-restore.md)).",
    parse: dataDir,
  }),
  MEDIAGATE_DATABASE_URL: custom({
    type: 'URL',
    default: 'unset: SQLite in the data directory',
    rule: "`postgres://` or `postgresql://` URL (libpq's form), no `#fragment`",
    secret: true,
    description:
      'Keep tasks, keys, accounts, assets, idempotency records and usage in this PostgreSQL database instead, shared by any number of processes on any machines (G177, G180-G186; [running a cluster](../guides/cluster.md)). Holds credentials: never logged, never repeated in a message.',
    parse: serviceUrl(
      ['postgres:', 'postgresql:'],
      'must be a PostgreSQL URL like postgres://user:password@host:5432/mediagate (scheme postgres:// or postgresql://, no #fragment)',
    ),
  }),
  MEDIAGATE_DATABASE_QUERY_TIMEOUT_SECONDS: onlyWith(
    'MEDIAGATE_DATABASE_URL',
    int({
      default: 30,
      min: 0,
      max: 3600,
      unit: 'seconds',
      description:
        "The longest a gateway process waits for one PostgreSQL statement's answer; then the call fails as the database unreachable (503 with `Retry-After`; a worker writes again later), and its connection is dropped. Bounds the wait on a database host that keeps connections open but stops answering (a partition, a hung server), which TCP keepalive does not end. `0`: no bound. The operator commands (`mediagate keys`, `credits reconcile` ...) and migrations never have one (G451).",
    }),
  ),
  MEDIAGATE_SQLITE_SYNC: choice(['normal', 'full'] as const, {
    default: 'normal',
    description: '`full` fsyncs every SQLite commit (survives power loss, slower submits); `normal` survives any crash of the process.',
  }),
  MEDIAGATE_REDIS_URL: custom({
    type: 'URL',
    default: 'unset: counts in the PostgreSQL database when there is one, else per process',
    rule: '`redis://` or `rediss://` URL, no `#fragment`',
    secret: true,
    description: 'Count the per-key rate limits in this Redis, shared by every process using it (G196).',
    parse: serviceUrl(['redis:', 'rediss:'], 'must be a Redis URL like redis://:password@host:6379/0 (scheme redis:// or rediss://, no #fragment)'),
  }),
  MEDIAGATE_VIDEOS_RESULT_TTL_HOURS: int({
    default: 24,
    min: 1,
    max: HOURS_IN_A_YEAR,
    unit: 'hours',
    description: "Retention of `videos` and Model Center results (D20); the other families' retention is fixed.",
  }),
});

const BUCKET = 'MEDIAGATE_S3_BUCKET';
const S3 = group('Result storage in a bucket', {
  MEDIAGATE_S3_BUCKET: custom({
    type: 'bucket name',
    default: 'unset: files under the data directory',
    rule: '3-255 letters, digits, `.`, `-`, `_`; starting and ending with a letter or digit',
    description:
      "Keep result files, caller media copies and uploaded assets in this S3-compatible bucket (G170, G171; [result storage](../guides/storage.md)). Credentials come from the AWS SDK's own chain (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, a role), never from a setting of the gateway.",
    parse: s3Bucket,
  }),
  MEDIAGATE_S3_ENDPOINT: onlyWith(
    BUCKET,
    custom({
      type: 'URL',
      default: 'unset: AWS S3',
      rule: 'absolute http(s) URL without credentials, query or fragment',
      description: 'URL of an S3-compatible service (MinIO, Ceph, R2, ...), e.g. `http://127.0.0.1:9000`.',
      parse: s3Endpoint,
    }),
  ),
  MEDIAGATE_S3_REGION: onlyWith(
    BUCKET,
    custom({
      type: 'region name',
      default: "the SDK's (`AWS_REGION`, the profile); `us-east-1` with an endpoint",
      rule: 'letters, digits, `-`, `_`',
      description: 'Region of the bucket.',
      parse: s3Region,
    }),
  ),
  MEDIAGATE_S3_FORCE_PATH_STYLE: onlyWith(
    BUCKET,
    bool({
      default: false,
      description: '`1` addresses the bucket as `endpoint/bucket/key` (MinIO and most self-hosted services need it).',
    }),
  ),
  MEDIAGATE_S3_PREFIX: onlyWith(
    BUCKET,
    custom({
      type: 'key prefix',
      default: 'empty',
      rule: "`/`-separated segments of letters, digits and `!_.*'()-`; no leading `/`, no empty, `.` or `..` segment; at most 512 characters",
      description: 'Prepended to every key the gateway stores (`prod` -> `prod/results/...`), to share a bucket.',
      parse: s3Prefix,
    }),
  ),
  MEDIAGATE_S3_CREATE_BUCKET: onlyWith(
    BUCKET,
    bool({
      default: false,
      description: '`1`: a start that finds no bucket creates it (also when `/readyz` later finds it gone); for compose stacks and new clusters (G346).',
    }),
  ),
  MEDIAGATE_FILES_REDIRECT: onlyWith(
    BUCKET,
    bool({
      default: false,
      description:
        '`1` answers a `GET /files/...` with a 302 to a presigned bucket URL expiring with the link (at most 7 days), so downloads skip the gateway (G173).',
    }),
  ),
});

const LIMITS = group('Limits per key', {
  MEDIAGATE_RATE_LIMIT: choice(['on', 'off'] as const, {
    default: 'on',
    description: '`off` turns the per-key rate limits off (benchmarks, a trusted single tenant).',
  }),
  MEDIAGATE_RATE_LIMIT_SUBMITS: int({
    default: 10,
    min: 1,
    max: 1_000_000,
    unit: 'requests per second',
    description:
      "Submits (every POST and DELETE) per second per key, bursts of twice that; over it a 429 `rate_limited` with `Retry-After`. `mediagate keys limit KEY_ID --submits N` sets one key's own (G76, G77).",
  }),
  MEDIAGATE_RATE_LIMIT_QUERIES: int({
    default: 50,
    min: 1,
    max: 1_000_000,
    unit: 'requests per second',
    description: 'Queries (every GET, long-polls included) per second per key, bursts of twice that; `--queries N` per key.',
  }),
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: int({
    default: 500,
    min: 0,
    max: 10_000_000,
    description: 'Queued and processing tasks one key may have; one more is a 429 `too_many_tasks_in_flight`; `0`: no bound (G78, G198).',
  }),
});

const MEDIA = group('Caller media and assets', {
  MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS: int({
    default: 60_000,
    min: 1000,
    max: 600_000,
    unit: 'milliseconds',
    description: 'Bound on fetching and checking all caller media of one create call (waiting for slots included); then a 400 `media_fetch_failed` (G60).',
  }),
  MEDIAGATE_ASSET_MAX_BYTES: int({
    default: 200 * MIB,
    min: 1024,
    max: 2048 * MIB,
    unit: 'bytes',
    description: 'Largest asset upload (multipart file or fetched `{url}`); larger: 413 (G68).',
  }),
  MEDIAGATE_ASSET_QUOTA_BYTES: int({
    default: 1024 * MIB,
    min: 1024,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    description: 'Bytes of approved assets one key may keep at once; more: 403 `asset_quota_exceeded` (G68).',
  }),
  MEDIAGATE_ASSET_TTL_HOURS: int({ default: 168, min: 1, max: HOURS_IN_A_YEAR, unit: 'hours', description: 'How long an uploaded asset is kept.' }),
  MEDIAGATE_MEDIA_REVIEW_SLOTS: int({
    default: 16,
    min: 1,
    max: 1024,
    description: 'Caller media (submit review, asset uploads, `{url}` fetches) fetched and checked at once per process (G100).',
  }),
  MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: int({
    default: { doc: 'the smaller of `4` and `MEDIAGATE_MEDIA_REVIEW_SLOTS`', value: (ctx) => Math.min(4, numberSetting(ctx, 'MEDIAGATE_MEDIA_REVIEW_SLOTS')) },
    min: 1,
    max: { doc: '`MEDIAGATE_MEDIA_REVIEW_SLOTS`', value: (ctx) => numberSetting(ctx, 'MEDIAGATE_MEDIA_REVIEW_SLOTS') },
    description: 'The same per API key: a key waits only behind its own media (G101).',
  }),
  MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT: int({
    default: {
      doc: '`629145600` (600 MiB), or `MEDIAGATE_ASSET_MAX_BYTES` when larger',
      value: (ctx) => Math.max(600 * MIB, numberSetting(ctx, 'MEDIAGATE_ASSET_MAX_BYTES')),
    },
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    check: {
      doc: 'at least the largest single medium: 200 MiB, or `MEDIAGATE_ASSET_MAX_BYTES` when larger',
      test: (keyBytes, ctx) => {
        const largest = Math.max(200 * MIB, numberSetting(ctx, 'MEDIAGATE_ASSET_MAX_BYTES'));
        return keyBytes < largest
          ? `must be at least the largest single medium, ${largest} bytes (200 MiB or MEDIAGATE_ASSET_MAX_BYTES), got ${keyBytes}`
          : undefined;
      },
    },
    description: 'Bytes of caller media one API key may have reserved at once (each medium reserves its size cap, lowered to its Content-Length) (G100).',
  }),
  MEDIAGATE_MEDIA_BYTES_IN_FLIGHT: int({
    default: {
      doc: '`2147483648` (2 GiB), or `MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT` when larger',
      value: (ctx) => Math.max(2048 * MIB, numberSetting(ctx, 'MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT')),
    },
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    check: {
      doc: 'at least `MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT`',
      test: (bytes, ctx) => {
        const keyBytes = numberSetting(ctx, 'MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT');
        return bytes < keyBytes ? `must be at least MEDIAGATE_MEDIA_KEY_BYTES_IN_FLIGHT (${keyBytes}), got ${bytes}` : undefined;
      },
    },
    description: 'The same per process (G100).',
  }),
});

const SANDBOX = group('Sandbox', {
  MEDIAGATE_SANDBOX_TIMING: choice(['instant', 'fast', 'realistic'] as const, {
    default: 'fast',
    description:
      'How long the built-in sandbox provider takes (D26, G14): `instant` renders at once, `fast` about a second before an image, `realistic` the typical generation times of each family.',
  }),
  MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: custom({
    type: 'number',
    default: '`50`',
    rule: '0 to 1000000, or `unlimited` (the same as `0`: no delay)',
    description: 'How fast the sandbox chat provider generates, streamed or not (G42).',
    parse: tokensPerSecond(50),
  }),
});

const PROVIDERS = group('Providers and routes', {
  MEDIAGATE_PROVIDERS: readElsewhere({
    type: 'path',
    default: 'unset: every model on the sandbox (or the shorthand settings below)',
    rule: 'a providers.json file',
    readBy: 'src/providers/providers-file.ts',
    description:
      'The upstream providers and the route of each model ([providers.json](providers/README.md)). With it the shorthand settings `MEDIAGATE_MODEL_ROUTES`, `MEDIAGATE_CHAT_CONFIG` and `MEDIAGATE_CHAT_UPSTREAM_*` are refused, with a message saying how to move them into the file (G120).',
  }),
  MEDIAGATE_MODEL_ROUTES: custom({
    type: 'list',
    default: 'unset: every model on the sandbox',
    rule: '`model=provider` pairs, comma-separated; `*=provider` for every other model',
    description: 'Shorthand without providers.json: which provider makes each model (e.g. `pic-2=sandbox,*=sandbox`).',
    parse: modelRoutes,
  }),
  MEDIAGATE_PROVIDER_CALLBACKS: bool({
    default: false,
    check: {
      doc: 'needs `MEDIAGATE_PUBLIC_URL`',
      test: (on, ctx) =>
        on && !ctx.env.MEDIAGATE_PUBLIC_URL
          ? 'needs MEDIAGATE_PUBLIC_URL: the public origin at which upstreams reach this gateway (callbacks go to <MEDIAGATE_PUBLIC_URL>/v1/provider-callbacks/...)'
          : undefined,
    },
    description:
      '`1` asks upstreams that can notify the end of a generation (Replicate, fal) to call `<MEDIAGATE_PUBLIC_URL>/v1/provider-callbacks/...`, which must then be reachable from them; checks are still polled ([provider callbacks](providers/callbacks.md), G157).',
  }),
});

const CHAT_UPSTREAM = 'src/chat/upstream-config.ts';
const CHAT = group('Chat', {
  MEDIAGATE_CHAT_HEARTBEAT_MS: int({
    default: 15_000,
    min: 10,
    max: 600_000,
    unit: 'milliseconds',
    description: 'A chat stream sends a `: ping` comment after this long without an event (G40).',
  }),
  MEDIAGATE_CHAT_CONFIG: readElsewhere({
    type: 'path',
    default: 'unset',
    rule: 'a JSON file `{upstreams, models}`',
    readBy: CHAT_UPSTREAM,
    description:
      'OpenAI-compatible chat upstreams and the chat models each answers, without providers.json ([openai-chat](providers/openai-chat.md#without-providersjson), G50).',
  }),
  MEDIAGATE_CHAT_UPSTREAM_URL: readElsewhere({
    type: 'URL',
    default: 'unset',
    rule: 'http(s) URL up to the API version, without credentials, query or fragment; required by the other `MEDIAGATE_CHAT_UPSTREAM_*`',
    readBy: CHAT_UPSTREAM,
    description:
      'One OpenAI-compatible chat upstream (named `env`), e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (Ollama); `/chat/completions` is appended.',
  }),
  MEDIAGATE_CHAT_UPSTREAM_KEY: readElsewhere({
    type: 'text',
    default: 'unset: no `Authorization` header',
    rule: '',
    readBy: CHAT_UPSTREAM,
    secret: true,
    description: 'Bearer key of that upstream.',
  }),
  MEDIAGATE_CHAT_UPSTREAM_MODELS: readElsewhere({
    type: 'list',
    default: 'required with the URL',
    rule: '`chat-model=upstream-model` pairs, comma-separated; `*=model` for every chat model not named',
    readBy: CHAT_UPSTREAM,
    description: 'Which chat models the upstream answers, under which of its names (`chat-2.5-flash=gpt-4o-mini,chat-2.5-pro=gpt-4o`).',
  }),
  MEDIAGATE_CHAT_UPSTREAM_TIMEOUT_MS: readElsewhere({
    type: 'whole number of milliseconds',
    default: '`120000`',
    rule: '100 to 3600000',
    readBy: CHAT_UPSTREAM,
    description: 'Bound on a whole call, a whole stream included; then 504 (G53).',
  }),
  MEDIAGATE_CHAT_UPSTREAM_STALL_TIMEOUT_MS: readElsewhere({
    type: 'whole number of milliseconds',
    default: '`30000` (at most the timeout)',
    rule: '100 to 3600000',
    readBy: CHAT_UPSTREAM,
    description: 'Longest silence inside a stream; then 504.',
  }),
  MEDIAGATE_CHAT_UPSTREAM_CONNECT_TIMEOUT_MS: readElsewhere({
    type: 'whole number of milliseconds',
    default: '`10000` (at most the timeout)',
    rule: '100 to 3600000',
    readBy: CHAT_UPSTREAM,
    description: 'TCP and TLS connect bound.',
  }),
  MEDIAGATE_CHAT_UPSTREAM_MAX_TOKENS_PARAM: readElsewhere({
    type: 'one of `max_completion_tokens`, `max_tokens`, `both`',
    default: '`max_completion_tokens`',
    rule: '',
    readBy: CHAT_UPSTREAM,
    description: 'Under which name `max_completion_tokens` is sent: `max_tokens` for older servers, `both` for servers that ignore unknown fields (G52).',
  }),
});

const CREDITS = group('Credits', {
  MEDIAGATE_CREDITS: choice(['off', 'on'] as const, {
    default: 'off',
    description:
      '`on` refuses (402 `insufficient_credits`) a submit or chat request its account or key cap cannot cover; `off` holds, settles and records every price but never refuses ([credits](../guides/credits.md), G204).',
  }),
  MEDIAGATE_STARTING_CREDITS: custom({
    type: 'credits',
    default: '`0`',
    rule: '0 to 999999999.999999, at most 6 decimals',
    description: 'Credits a new account starts with (G200, G251).',
    parse: startingCredits,
  }),
  MEDIAGATE_PRICES: custom({
    type: 'path',
    default: "unset: the catalog's prices, chat free",
    rule: 'a JSON file `{models, chat}`',
    description: 'Price overrides per model and chat prices per 1,000 tokens (G202). Read at start: restart to load a changed file.',
    parse: (_name, raw) => readPrices(raw || undefined),
  }),
  MEDIAGATE_CHAT_HOLD_TOKENS: int({
    default: 4096,
    min: 1,
    max: 10_000_000,
    unit: 'tokens',
    description: 'Completion tokens held for a chat request that sets no `max_completion_tokens`; settled to what it used (G206).',
  }),
});

const WEBHOOKS = group('Webhooks', {
  MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS: int({
    default: 15,
    min: 1,
    max: 60,
    unit: 'seconds',
    description: "Bound on one delivery attempt, from DNS to the receiver's answer (G211).",
  }),
  MEDIAGATE_WEBHOOK_RETRY_SECONDS: int({
    default: 5,
    min: 1,
    max: 3600,
    unit: 'seconds',
    description: "Wait after a delivery's first failed attempt; it doubles after each (G212).",
  }),
  MEDIAGATE_WEBHOOK_RETRY_MAX_SECONDS: int({
    default: 3600,
    min: { doc: '`MEDIAGATE_WEBHOOK_RETRY_SECONDS`', value: (ctx) => numberSetting(ctx, 'MEDIAGATE_WEBHOOK_RETRY_SECONDS') },
    max: 86_400,
    unit: 'seconds',
    description: 'Longest wait between two attempts of a delivery.',
  }),
  MEDIAGATE_WEBHOOK_RETRY_HOURS: int({
    default: 24,
    min: 1,
    max: 720,
    unit: 'hours',
    description: 'A delivery still failing this long after it was queued is given up (`failed`).',
  }),
});

const OBSERVABILITY = 'src/metrics/settings.ts';
const METRICS = group('Metrics and tracing', {
  MEDIAGATE_METRICS_TOKEN: readElsewhere({
    type: 'text',
    default: 'unset: `/metrics` is off (404)',
    rule: '16 to 200 printable characters without spaces',
    readBy: OBSERVABILITY,
    secret: true,
    description: 'Serve Prometheus metrics at `GET /metrics` to requests with `Authorization: Bearer <token>` ([metrics](observability.md#metrics), G221).',
  }),
  MEDIAGATE_METRICS_KEYS: readElsewhere({
    type: 'list',
    default: 'empty',
    rule: 'key ids (`key_...`), comma-separated, at most 100; needs the token',
    readBy: OBSERVABILITY,
    description: 'Keys whose requests get a `key` label of their own in the request metrics; every other request has an empty one.',
  }),
  MEDIAGATE_METRICS_MODELS: readElsewhere({
    type: 'list',
    default: 'empty',
    rule: 'model names, comma-separated; needs the token',
    readBy: OBSERVABILITY,
    description: "Model names reported as themselves besides the catalog's, the chat models and the routed ones (any other model is `other`).",
  }),
  MEDIAGATE_OTEL: readElsewhere({
    type: 'on or off',
    default: '`off` (the SDK is not loaded)',
    rule: '`on`, `off`, `1`, `0`, `true`, `false`',
    readBy: OBSERVABILITY,
    description: '`on`: OpenTelemetry traces of requests, task runs and upstream calls, exported by OTLP/HTTP ([tracing](observability.md#tracing), G227).',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: readElsewhere({
    type: 'URL',
    default: '`http://localhost:4318`',
    rule: 'http(s) URL',
    readBy: OBSERVABILITY,
    description: 'Where spans go, with `/v1/traces` appended (only with `MEDIAGATE_OTEL=on`; the standard OpenTelemetry variable).',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: readElsewhere({
    type: 'URL',
    default: 'unset',
    rule: 'http(s) URL',
    readBy: OBSERVABILITY,
    description: 'Where spans go, as given (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`).',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: readElsewhere({
    type: 'list',
    default: 'empty',
    rule: '`name=value` pairs, comma-separated, values URL-encoded',
    readBy: OBSERVABILITY,
    secret: true,
    description: "Headers sent with every export (a collector's credentials: never logged).",
  }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: readElsewhere({
    type: 'list',
    default: 'unset',
    rule: 'as `OTEL_EXPORTER_OTLP_HEADERS`',
    readBy: OBSERVABILITY,
    secret: true,
    description: 'Headers for trace exports (win over `OTEL_EXPORTER_OTLP_HEADERS`).',
  }),
  OTEL_SERVICE_NAME: readElsewhere({
    type: 'text',
    default: '`mediagate`',
    rule: '',
    readBy: OBSERVABILITY,
    description: 'The service name of the spans.',
  }),
});

const CLIENT = 'src/main/client-commands.ts';
/** The section of the variables `mediagate generate` and `mediagate tasks` read: the client's, not the server's. */
export const CLIENT_GROUP = 'Client commands';
const CLIENT_COMMANDS = group(CLIENT_GROUP, {
  MEDIAGATE_URL: readElsewhere({
    type: 'URL',
    default: 'unset (then `--url` is required)',
    rule: '',
    readBy: CLIENT,
    description:
      'The `{base_url}` of the gateway `mediagate generate` and `mediagate tasks` talk to (`--url` wins). A setting of the client, not of the server ([CLI](cli.md#client-commands), G236).',
  }),
  MEDIAGATE_API_KEY: readElsewhere({
    type: 'text',
    default: 'unset (then `--api-key` is required)',
    rule: 'visible ASCII only (G247)',
    readBy: CLIENT,
    secret: true,
    description: 'The API key of those commands (`--api-key` wins).',
  }),
  MEDIAGATE_ADMIN_KEY: readElsewhere({
    type: 'text',
    default: 'unset',
    rule: 'visible ASCII only',
    readBy: CLIENT,
    secret: true,
    description: "The admin key the `mediagate keys|accounts|credits ... --url URL` commands send to the operator's API (G314). Not read by the server.",
  }),
  MEDIAGATE_POWER_URL: readElsewhere({
    type: 'URL',
    default: '`MEDIAGATE_URL`',
    rule: '',
    readBy: CLIENT,
    description: "The gateway's `{power_base_url}`, when it serves one under a prefix.",
  }),
  MEDIAGATE_API_URL: readElsewhere({
    type: 'URL',
    default: '`MEDIAGATE_URL`',
    rule: '',
    readBy: CLIENT,
    description: "The gateway's `{api_base_url}`, when it serves one under a prefix.",
  }),
});

/** Every setting, in the order of the reference (and of reading). */
export const SETTINGS = {
  ...SERVER,
  ...KEYS,
  ...PROCESSES,
  ...STORAGE,
  ...S3,
  ...LIMITS,
  ...MEDIA,
  ...SANDBOX,
  ...PROVIDERS,
  ...CHAT,
  ...CREDITS,
  ...WEBHOOKS,
  ...METRICS,
  ...CLIENT_COMMANDS,
};

export type SettingName = keyof typeof SETTINGS;

/** What the reference says before a group's table (markdown). */
export const GROUP_NOTES: Readonly<Record<string, string>> = {
  'Result storage in a bucket':
    'The AWS SDK also reads its own variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_PROFILE`, `AWS_REGION`, `AWS_REQUEST_CHECKSUM_CALCULATION`); the gateway never reads or logs them.',
  Chat: 'The `MEDIAGATE_CHAT_*` upstream settings are the shorthand of a providers.json provider of type `openai-chat`; they are checked together by the chat upstream configuration.',
  [CLIENT_GROUP]: 'Read by `mediagate generate` and `mediagate tasks`, which talk to a running gateway over HTTP; the server never reads them.',
};
