/**
 * Starts OpenTelemetry tracing (G227): loaded with `import()` only when `MEDIAGATE_OTEL=on`, so a
 * gateway without tracing never loads the SDK. Spans go in batches to the OTLP/HTTP exporter,
 * which reads the standard settings itself (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, default
 * `http://localhost:4318/v1/traces`); the service is named by `OTEL_SERVICE_NAME` (default
 * `mediagate`). Tests pass an exporter of their own (in memory) and get each span at once.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  /** Sends the spans still buffered and stops the SDK. */
  shutdown(): Promise<void>;
}

export async function startTracing(options: { serviceName?: string; exporter?: SpanExporter } = {}): Promise<Tracing> {
  const [{ NodeTracerProvider }, { BatchSpanProcessor, SimpleSpanProcessor }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = options.exporter ?? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  const processor = options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? process.env.OTEL_SERVICE_NAME ?? 'mediagate' }),
    spanProcessors: [processor],
  });
  // the global provider, the AsyncLocalStorage context manager and the W3C trace-context propagator
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
