/**
 * OpenTelemetry tracing (G227-G229): the spans the gateway makes, through `@opentelemetry/api`
 * only. The API answers no-op spans until an SDK registers itself (tracing/start.ts, loaded only
 * when `MEDIAGATE_OTEL=on`), so with tracing off each span costs a call that returns at once.
 */
import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';

export const tracer = trace.getTracer('mediagate');

/** Runs `fn` inside a new span (the current context's child), ending it when `fn` settles; a throw marks it failed. */
export function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The W3C `traceparent` of the current span when it is recorded (tracing on and sampled), else undefined. */
export function currentTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** A context whose parent is the span a `traceparent` names (the task's submit), or the root one. */
export function contextOf(traceparent: string | undefined): ReturnType<typeof context.active> {
  return traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Response headers that carry the upstream's own id of a request, in the order they are read. */
const UPSTREAM_REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-fal-request-id'] as const;

/** The upstream's id of a request, from its answer's headers, if it sent one. */
export function upstreamRequestId(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of UPSTREAM_REQUEST_ID_HEADERS) {
    const value = headers[name];
    const one = Array.isArray(value) ? value[0] : value;
    if (one) return one.slice(0, 200);
  }
  return undefined;
}

export { SpanKind };

/** An upstream answer read outside `upstreamCall` (chat streams): its status and request id on the current span. */
export function noteUpstreamAnswer(status: number, headers: Record<string, string | string[] | undefined>): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttribute('http.response.status_code', status);
  const upstreamId = upstreamRequestId(headers);
  if (upstreamId !== undefined) span.setAttribute('mediagate.upstream.request_id', upstreamId);
}

/**
 * A channel slot held across a stream (chat): an `upstream <channel>` span from the slot to its
 * release, the context `run` makes active for the calls that reach the upstream (G228).
 */
export function slotSpan(provider: string): { run<T>(fn: () => T): T; end(outcome: string): void } {
  const span = tracer.startSpan(`upstream ${provider}`, { kind: SpanKind.CLIENT, attributes: { 'mediagate.channel': provider } });
  const active = trace.setSpan(context.active(), span);
  let ended = false;
  return {
    run: (fn) => context.with(active, fn),
    end: (outcome) => {
      if (ended) return;
      ended = true;
      span.setAttribute('mediagate.upstream.outcome', outcome);
      span.end();
    },
  };
}
