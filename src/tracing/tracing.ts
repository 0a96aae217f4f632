/**
 * OpenTelemetry tracing (G227-G229): the spans the gateway makes, through `@opentelemetry/api`
 * only, and only once tracing started (otel.ts, G297): until then each helper here runs its
 * function with no span and costs a call that returns at once.
 */
import type { Attributes, AttributeValue, Context, Span, SpanKind as OtelSpanKind } from '@opentelemetry/api';
import { otel } from './otel.js';

/** The kinds of span the gateway makes: OpenTelemetry's values, named without loading its API. */
export const SpanKind = { INTERNAL: 0 as OtelSpanKind.INTERNAL, SERVER: 1 as OtelSpanKind.SERVER, CLIENT: 2 as OtelSpanKind.CLIENT } as const;

/** What code inside a span may note on it. */
export interface SpanNotes {
  setAttribute(key: string, value: AttributeValue): unknown;
}

const NO_SPAN: SpanNotes = { setAttribute: () => NO_SPAN };

/** Runs `fn` inside a new span (the current context's child), ending it when `fn` settles; a throw marks it failed. */
export function inSpan<T>(name: string, kind: OtelSpanKind, attributes: Attributes, fn: (span: SpanNotes) => Promise<T>): Promise<T> {
  const o = otel();
  if (!o) return fn(NO_SPAN);
  return o.tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
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
  // SpanStatusCode.ERROR
  span.setStatus({ code: 2, message: err instanceof Error ? err.message : String(err) });
}

/** The W3C `traceparent` of the current span when it is recorded (tracing on and sampled), else undefined. */
export function currentTraceparent(): string | undefined {
  const o = otel();
  const span = o?.api.trace.getActiveSpan();
  if (!o || !span?.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  o.api.propagation.inject(o.api.context.active(), carrier);
  return carrier.traceparent;
}

/** Notes `key` on the current span, if there is one. */
export function noteOnCurrentSpan(key: string, value: AttributeValue): void {
  otel()?.api.trace.getActiveSpan()?.setAttribute(key, value);
}

/** A context whose parent is the span a `traceparent` names (the task's submit), or the root one. */
export function contextOf(api: NonNullable<ReturnType<typeof otel>>['api'], traceparent: string | undefined): Context {
  return traceparent === undefined ? api.ROOT_CONTEXT : api.propagation.extract(api.ROOT_CONTEXT, { traceparent });
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

/** An upstream answer read outside `upstreamCall` (chat streams): its status and request id on the current span. */
export function noteUpstreamAnswer(status: number, headers: Record<string, string | string[] | undefined>): void {
  const span = otel()?.api.trace.getActiveSpan();
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
  const o = otel();
  if (!o) return { run: (fn) => fn(), end: () => undefined };
  const { api, tracer } = o;
  const span = tracer.startSpan(`upstream ${provider}`, { kind: SpanKind.CLIENT, attributes: { 'mediagate.channel': provider } });
  const active = api.trace.setSpan(api.context.active(), span);
  let ended = false;
  return {
    run: (fn) => api.context.with(active, fn),
    end: (outcome) => {
      if (ended) return;
      ended = true;
      span.setAttribute('mediagate.upstream.outcome', outcome);
      span.end();
    },
  };
}
