/**
 * One span per HTTP request (G228), registered only when tracing is on. The span starts when the
 * request arrives (the parent is the caller's `traceparent`, when it sent one) and is made the
 * active context for the hooks and the handler that follow, so a submit's span is the parent of
 * its task's run (the task keeps its `traceparent`, G229). It ends when the answer is sent, named
 * by the route's pattern.
 */
import type { Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { routePattern } from '../metrics/http-hooks.js';
import { otel } from './otel.js';
import { SpanKind } from './tracing.js';

const SPAN = Symbol('mediagate.span');
type Traced = { [SPAN]?: Span };

/** Registers the hooks when tracing started (G297); without the API loaded there are no spans to make. */
export function registerRequestSpans(app: FastifyInstance): void {
  const o = otel();
  if (!o) return;
  const {
    api: { context, propagation, trace },
    tracer,
  } = o;
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer.startSpan(
      `${request.method}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'mediagate.request_id': request.id } },
      parent,
    );
    (request as Traced)[SPAN] = span;
    context.with(trace.setSpan(parent, span), done);
  });
  // a client that leaves before the answer: the span ends there, marked so
  app.addHook('onRequestAbort', (request, done) => {
    const span = (request as Traced)[SPAN];
    if (span) {
      (request as Traced)[SPAN] = undefined;
      span.updateName(`${request.method} ${routePattern(request)}`);
      span.setAttribute('mediagate.client_aborted', true);
      span.end();
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = (request as Traced)[SPAN];
    if (span) {
      (request as Traced)[SPAN] = undefined;
      const route = routePattern(request);
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: 2 }); // SpanStatusCode.ERROR
      span.end();
    }
    done();
  });
}
