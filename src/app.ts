import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AdminServices } from './admin/services.js';
import type { KeyUsage } from './auth/key-usage.js';
import { registerAuth, type AuthOptions } from './auth/plugin.js';
import type { ChatService } from './chat/service.js';
import { ConsoleSessions } from './console/sessions.js';
import { CONSOLE_DIST, registerConsoleStatic } from './console/static.js';
import type { Config } from './config.js';
import { AppError } from './errors.js';
import type { ReplyContext } from './families/reply-context.js';
import { AccessLog } from './http/access-log.js';
import { registerBodyBounds } from './http/body-bounds.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { documentOnlySerializers, registerOpenApi } from './http/openapi.js';
import type { LiveRequests } from './http/live-requests.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';
import { registerRequestMetrics } from './metrics/http-hooks.js';
import { registerMetricsRoute } from './metrics/route.js';
import { registerRequestSpans } from './tracing/http-spans.js';
import { handleClientError, handleFrameworkError, MAX_PARAM_LENGTH, REQUEST_TIMEOUT_MS } from './http/protocol-errors.js';
import { registerRateLimits } from './http/rate-limit.js';
import { lazyValidators } from './http/lazy-validators.js';
import type { RateLimitBackend } from './limits/backend.js';
import { formatSchemaErrors, type SchemaError } from './http/validation-errors.js';
import type { AssetService } from './media/asset-service.js';
import type { BlobStores } from './media/blob-stores.js';
import type { ResultUrlSigner } from './media/signed-url.js';
import type { AccountView } from './credits/account-view.js';
import type { WebhookKeys } from './webhooks/webhook-keys.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerAdminRoutes } from './routes/admin/scope.js';
import { registerAssetRoutes } from './routes/assets.js';
import { registerChatRoutes } from './routes/chat.js';
import { registerConsoleSessionRoutes } from './routes/console/session.js';
import { registerFileRoutes } from './routes/files.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerProviderCallbackRoutes } from './routes/provider-callbacks.js';
import { FAMILY_ROUTES } from './routes/index.js';
import type { RoutePaths } from './routes/route-types.js';
import { registerResultRoutes } from './routes/results.js';
import { registerTaskEventsRoute } from './routes/task-events.js';
import { registerTaskListRoute } from './routes/tasks.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import type { ResourceMonitor } from './resources.js';
import type { Store } from './store/types.js';
import type { IdempotencyService } from './tasks/idempotency.js';
import type { CallbackReceiver } from './tasks/callbacks.js';
import type { TaskService } from './tasks/service.js';
import type { TaskStreams } from './tasks/task-stream.js';

/** What the routes call: the services, built by main/gateway.ts. */
export interface AppServices {
  tasks: TaskService;
  chat: ChatService;
  idempotency: IdempotencyService;
  assets: AssetService;
  /** Signs result URLs in query replies. */
  links: ReplyContext;
  /** Takes provider callbacks (G157), when the gateway asks upstreams for them. */
  callbacks?: CallbackReceiver;
  /** Status streams (`GET /v1/tasks/{id}/events`, G219). */
  streams: TaskStreams;
  /** The admin API's services (G300-G311). */
  admin: AdminServices;
  /** The calling key's account and usage (`GET /v1/account`). */
  accounts: AccountView;
  /** A key's webhook signing secret and a task's deliveries. */
  webhooks: WebhookKeys;
}

export interface AppDeps {
  config: Config;
  /** Health checks, authentication and per-key rate limits read it directly. */
  store: Store;
  services: AppServices;
  signer: ResultUrlSigner;
  /** Result files at signed `/files` URLs, the tasks' copies of caller media at signed `/inputs` URLs (G92), and whether the storage answers (/readyz). */
  storage: Pick<BlobStores, 'results' | 'inputs' | 'problem'>;
  logger: Logger;
  /** Open streams and long-polls: ended on client exit, key revocation and shutdown. */
  live: LiveRequests;
  /** The gateway's own disk and descriptors, for /readyz. */
  resources: ResourceMonitor;
  /** Where per-key rate-limit counts live (G196); unused when `config.rateLimits` is off. */
  rateLimits: RateLimitBackend;
  /** The process's metrics (G221); absent when `/metrics` is off. */
  metrics?: GatewayMetrics | undefined;
  /** Keys' last-used times (G308), told of every authenticated request. */
  keyUsage?: KeyUsage;
  /** The clock keys' expiry is read against (default `Date.now`; tests step it). */
  now?: () => number;
  /** The built web console served at `/console/` (default console/dist; G360). */
  consoleDir?: string;
  /** How long `/readyz` waits for the store's ping, ms (default STORE_PING_MS; G277). */
  storePingMs?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Request ids are `<process boot id>-<counter>`: unique across restarts and nodes, cheap to make. */
const BOOT_ID = randomBytes(4).toString('hex');
let requestCount = 0;

/** The HTTP application: plugins and routes, no listen (tests use `app.inject` or listen on port 0). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    requestIdHeader: false, // genReqId reads and checks x-request-id itself
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `${BOOT_ID}-${(++requestCount).toString(36)}`;
    },
    ajv: { customOptions: { allowUnionTypes: true, coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, verbose: true } },
    // validators compiled on first use (G298); response schemas document only (G242)
    schemaController: { compilersFactory: { buildValidator: lazyValidators(), buildSerializer: documentOnlySerializers() } },
    schemaErrorFormatter: (errors, dataVar) => formatSchemaErrors(errors as unknown as SchemaError[], dataVar),
    return503OnClosing: false, // the onRequest hook below answers 503 in the route's family body (G111)
    // Errors before routing answer the standard error body too (G111).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: (err, socket) => handleClientError(err, socket, { headersTimeoutMs: config.headersTimeoutMs }),
    logController: new AccessLog(), // one access-log line per request
    connectionTimeout: 90_000, // idle sockets; above the longest long-poll (60 s)
    keepAliveTimeout: 90_000, // idle keep-alive connections between requests (G75, G78; Fastify's default is 72 s)
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Node reads these when the server is made (assigning them later has no effect): a connection
    // must send a request's headers within MEDIAGATE_HEADERS_TIMEOUT_SECONDS (10), so clients that
    // send nothing cannot hold sockets (G84); the check runs every second.
    http: { headersTimeout: config.headersTimeoutMs, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs) },
  });
  app.server.maxConnections = config.maxConnections; // more are closed at once (G84)
  // first: the request's span is the context of every hook and handler after it (G228)
  if (config.observability.tracing) registerRequestSpans(app);
  if (deps.metrics) registerRequestMetrics(app, deps.metrics);
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  // Once closing, requests still arriving on open connections get a 503 and the connection closes.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (closing) {
      done(new AppError('service_unavailable', 'The gateway is shutting down; retry the request on a new connection', { headers: { connection: 'close' } }));
      return;
    }
    done();
  });
  registerErrorHandling(app);
  // every role answers /metrics (a worker's upstream calls and task times are its own, G226)
  const { metrics: metricsSettings } = config.observability;
  if (deps.metrics && metricsSettings) registerMetricsRoute(app, deps.metrics, metricsSettings.token);
  // a worker process answers only its health (G163): callers, files and callbacks go to API processes
  if (config.role === 'worker') {
    registerHealthRoutes(app, store, deps.resources, deps.storage, deps.storePingMs);
    return app;
  }

  await registerOpenApi(app, '0.1.0');

  registerHealthRoutes(app, store, deps.resources, deps.storage, deps.storePingMs);
  registerFileRoutes(app, deps.signer, { results: deps.storage.results, inputs: deps.storage.inputs, redirect: config.filesRedirect });
  // signed by the upstream, not by a key: outside the authenticated scope
  if (deps.services.callbacks) await registerProviderCallbackRoutes(app, deps.services.callbacks);

  const { tasks, chat, idempotency, assets, links } = deps.services;
  const { live } = deps;
  const paths: RoutePaths = { basePrefix: '', powerPrefix: config.powerPrefix, apiPrefix: config.apiPrefix };
  const { keyUsage } = deps;
  const now = deps.now ?? Date.now;
  // the web console (G360-G365): its files, its sign-in, and its session accepted as a key by both scopes below
  const sessions = new ConsoleSessions(store.sessions, store.keys, { ttlMs: config.consoleSessionMs, publicUrl: config.publicUrl, now });
  registerConsoleStatic(app, { dir: deps.consoleDir ?? CONSOLE_DIST, publicUrl: config.publicUrl, filesRedirect: config.filesRedirect });
  registerConsoleSessionRoutes(app, sessions, store.keys, paths);
  const auth: AuthOptions = { now, sessions, ...(keyUsage && { onKeyUsed: (id: string, at: number) => keyUsage.touch(id, at) }) };
  await app.register(async (api) => {
    registerAuth(api, store.keys, auth);
    if (config.rateLimits) registerRateLimits(api, store.keys, config.rateLimits, deps.rateLimits);
    registerIdempotency(api, idempotency);
    registerBodyBounds(api);
    for (const register of FAMILY_ROUTES) register(api, tasks, paths, links, live);
    registerResultRoutes(api, tasks, links, paths, live);
    registerChatRoutes(api, chat, live);
    registerAssetRoutes(api, assets, paths, config.assetMaxBytes);
    registerAccountRoutes(api, deps.services.accounts);
    registerTaskListRoute(api, tasks, links);
    registerTaskEventsRoute(api, tasks, deps.services.streams, links, live);
    registerWebhookRoutes(api, deps.services.webhooks, tasks);
  });
  await registerAdminRoutes(app, store.keys, deps.services.admin, auth);
  return app;
}
