/**
 * Starts OpenTelemetry tracing (G227): loaded with `import()` only when `MEDIAGATE_OTEL=on`, so a
 * gateway without tracing never loads the SDK. Spans go in batches to the OTLP/HTTP exporter at the
 * URL and with the headers of the settings (the standard `OTEL_EXPORTER_OTLP_*` variables, read
 * with the configuration). Tests pass an exporter of their own (in memory) and get each span at once.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../metrics/settings.js';
import { loadOtel } from './otel.js';

export interface Tracing {
  /** Sends the spans still buffered and stops the SDK. */
  shutdown(): Promise<void>;
}

export async function startTracing(options: { settings?: TracingSettings; exporter?: SpanExporter } = {}): Promise<Tracing> {
  await loadOtel(); // the gateway's spans are made from here on (G297)
  const [{ NodeTracerProvider }, { BatchSpanProcessor, SimpleSpanProcessor }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const { settings } = options;
  const exporter =
    options.exporter ??
    new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(settings && { url: settings.url, headers: settings.headers });
  const processor = options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings?.serviceName ?? 'mediagate' }),
    spanProcessors: [processor],
  });
  // the global provider, the AsyncLocalStorage context manager and the W3C trace-context propagator
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
