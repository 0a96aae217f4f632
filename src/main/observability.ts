/** The process's metrics and tracing, from the configuration (G221-G229). */
import type { Config } from '../config.js';
import { MODELS } from '../contract/catalog.js';
import { CHAT_MODELS } from '../contract/chat.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { Store } from '../store/types.js';
import type { Tracing } from '../tracing/start.js';

/**
 * The metrics when `/metrics` is on: models are labelled by name when the catalog has them, a
 * route names them (providers.json, MEDIAGATE_MODEL_ROUTES) or MEDIAGATE_METRICS_MODELS does.
 * prom-client is loaded only then (G296).
 */
export async function createMetrics(config: Config, routedModels: readonly string[]): Promise<GatewayMetrics | undefined> {
  const settings = config.observability.metrics;
  if (!settings) return undefined;
  const { GatewayMetrics } = await import('../metrics/gateway-metrics.js');
  const models = [...MODELS.map((m) => m.id), ...CHAT_MODELS, ...routedModels.filter((m) => m !== '*'), ...settings.models];
  return new GatewayMetrics({ models, keys: settings.keys });
}

/** Credits held and captured over every account (the accounts' cached totals, G200). */
export async function creditTotals(store: Pick<Store, 'credits'>): Promise<{ heldMicro: number; capturedMicro: number }> {
  let heldMicro = 0;
  let capturedMicro = 0;
  for (const a of await store.credits.listAccounts()) {
    heldMicro += a.heldMicro;
    capturedMicro += a.spentMicro;
  }
  return { heldMicro, capturedMicro };
}

/** Tracing when MEDIAGATE_OTEL=on: the SDK is imported only then (G227). */
export async function startTracingIf(config: Config): Promise<Tracing | undefined> {
  const settings = config.observability.tracing;
  if (!settings) return undefined;
  const { startTracing } = await import('../tracing/start.js');
  return startTracing({ settings });
}
