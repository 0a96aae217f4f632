/**
 * The gateway's Prometheus metrics (G221-G226), one instance per gateway with a registry of its own
 * (tests build many gateways in one process; nothing is global). Every label is bounded: routes
 * are patterns, models outside the known set are `other`, keys are labelled only when allow-listed,
 * channels are the configured providers. The names and meanings are listed in docs/reference/observability.md#metrics.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CircuitState, UpstreamOutcome } from '../providers/channels.js';
import type { TaskRecord } from '../store/types.js';
import { collectStoreGauges, type StoreReadings } from './store-gauges.js';

/** How one webhook delivery attempt ended (the webhook sender reports it). */
export type WebhookOutcome = 'delivered' | 'failed' | 'timeout' | 'refused' | 'gave_up';

export interface GatewayMetricsOptions {
  /** Models reported under their own name (the catalog, the routed models, MEDIAGATE_METRICS_MODELS). */
  models: Iterable<string>;
  /** Key ids whose requests get a `key` label (MEDIAGATE_METRICS_KEYS). */
  keys?: ReadonlySet<string>;
  /** Node's process metrics (default true). */
  processMetrics?: boolean;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const TASK_BUCKETS = [1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open'];
export const OTHER_MODEL = 'other';

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly models: ReadonlySet<string>;
  /** Key ids whose requests are labelled (MEDIAGATE_METRICS_KEYS). */
  readonly keys: ReadonlySet<string>;

  private readonly httpRequests: Counter<'route' | 'method' | 'status' | 'key'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status' | 'key'>;
  private readonly upstreamCalls: Counter<'channel' | 'outcome'>;
  private readonly upstreamDuration: Histogram<'channel' | 'outcome'>;
  private readonly taskDuration: Histogram<'family' | 'model' | 'state'>;
  private readonly chatTokens: Counter<'model' | 'kind'>;
  private readonly chatFirstToken: Histogram<'model'>;
  private readonly webhookDeliveries: Counter<'outcome'>;

  constructor(options: GatewayMetricsOptions) {
    this.models = new Set(options.models);
    this.keys = options.keys ?? new Set();
    const registers = [this.registry];
    const requestLabels = ['route', 'method', 'status', ...(this.keys.size > 0 ? ['key' as const] : [])] as const;
    this.httpRequests = new Counter({
      name: 'mediagate_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
      labelNames: requestLabels,
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'mediagate_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route pattern, method and status',
      labelNames: requestLabels,
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamCalls = new Counter({
      name: 'mediagate_upstream_calls_total',
      help: 'Calls to upstream channels by channel and outcome (ok, fault, error, circuit_open)',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: 'mediagate_upstream_call_duration_seconds',
      help: 'Time of the calls that reached an upstream channel, by channel and outcome',
      labelNames: ['channel', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.taskDuration = new Histogram({
      name: 'mediagate_task_duration_seconds',
      help: 'Time from submit to the terminal state, observed by the process that made the transition',
      labelNames: ['family', 'model', 'state'],
      buckets: TASK_BUCKETS,
      registers,
    });
    this.chatTokens = new Counter({
      name: 'mediagate_chat_tokens_total',
      help: 'Chat tokens billed, by model and kind (prompt, completion)',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.chatFirstToken = new Histogram({
      name: 'mediagate_chat_time_to_first_token_seconds',
      help: 'Time from a streamed chat request to its first content, by model',
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'mediagate_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'],
      registers,
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** The model's label: its name when known, else `other`. */
  model(model: string): string {
    return this.models.has(model) ? model : OTHER_MODEL;
  }

  /** One answered request; `route` is the route's pattern (`/v1/pic/{id}`), never the URL. */
  httpRequest(route: string, method: string, status: number, keyId: string | undefined, seconds: number): void {
    const labels = { route, method, status: String(status), ...(this.keys.size > 0 && { key: keyId !== undefined && this.keys.has(keyId) ? keyId : '' }) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** One call to a channel; `seconds` undefined when none went out (the circuit refused it). */
  upstreamCall(channel: string, outcome: UpstreamOutcome, seconds?: number): void {
    this.upstreamCalls.inc({ channel, outcome });
    if (seconds !== undefined) this.upstreamDuration.observe({ channel, outcome }, seconds);
  }

  /** A task this process moved to a terminal state. */
  taskFinished(task: Pick<TaskRecord, 'family' | 'model' | 'status' | 'createdAt' | 'finishedAt'>): void {
    if (task.finishedAt === null) return;
    this.taskDuration.observe({ family: task.family, model: this.model(task.model), state: task.status }, Math.max(0, task.finishedAt - task.createdAt) / 1000);
  }

  chatUsage(model: string, promptTokens: number, completionTokens: number): void {
    const label = this.model(model);
    if (promptTokens > 0) this.chatTokens.inc({ model: label, kind: 'prompt' }, promptTokens);
    if (completionTokens > 0) this.chatTokens.inc({ model: label, kind: 'completion' }, completionTokens);
  }

  chatFirstContent(model: string, seconds: number): void {
    this.chatFirstToken.observe({ model: this.model(model) }, seconds);
  }

  /** For the webhook sender: one delivery attempt's outcome. */
  webhookDelivery(outcome: WebhookOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The circuits of the channels, read at each scrape. */
  watchCircuits(circuits: () => Iterable<[channel: string, state: CircuitState]>): void {
    new Gauge({
      name: 'mediagate_circuit_state',
      help: "Each channel's circuit in this process: 1 for its current state (closed, open, half-open), 0 for the others",
      labelNames: ['channel', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [channel, current] of circuits()) for (const state of CIRCUIT_STATES) this.set({ channel, state }, state === current ? 1 : 0);
      },
    });
  }

  /** The gauges read from the store at scrape time (cached `cacheMs`): tasks, queue, credits. */
  watchStore(readings: StoreReadings, cacheMs = 5000, now: () => number = Date.now): void {
    collectStoreGauges(this, readings, cacheMs, now);
  }

  /** The text `/metrics` answers. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
