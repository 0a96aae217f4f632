/**
 * The OpenTelemetry API, loaded only when tracing starts (G297): tracing/start.ts loads it (with the
 * SDK) when `MEDIAGATE_OTEL=on`, and until then every span helper (tracing.ts, task-spans.ts,
 * http-spans.ts) does nothing, which is what the API does without an SDK, without loading it.
 */
import type * as OtelApi from '@opentelemetry/api';

export type Otel = typeof OtelApi;

/** The API and the gateway's tracer, once loaded. */
let loaded: { api: Otel; tracer: OtelApi.Tracer } | undefined;

/** The API and the gateway's tracer when tracing started, else undefined (spans are then skipped). */
export function otel(): { api: Otel; tracer: OtelApi.Tracer } | undefined {
  return loaded;
}

/** Loads the API (once); the tracer it gives follows the provider the SDK registers. */
export async function loadOtel(): Promise<Otel> {
  if (!loaded) {
    const api = await import('@opentelemetry/api');
    loaded = { api, tracer: api.trace.getTracer('mediagate') };
  }
  return loaded.api;
}
