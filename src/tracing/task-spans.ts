/**
 * The span of one piece of a task's work on a worker (G229): a start or a check, the child of the
 * span of the request that submitted the task (its `traceparent`, kept in the task's request), so
 * a trace runs from the submit through each run to every upstream call.
 */
import type { TaskRecord } from '../store/types.js';
import { otel } from './otel.js';
import { contextOf, failSpan, SpanKind } from './tracing.js';

export function inTaskSpan<T>(task: TaskRecord, checking: boolean, fn: () => Promise<T>): Promise<T> {
  const o = otel();
  if (!o) return fn();
  const { api, tracer } = o;
  const span = tracer.startSpan(
    checking ? 'task check' : 'task start',
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'mediagate.task_id': task.id,
        'mediagate.family': task.family,
        'mediagate.model': task.model,
        'mediagate.provider': task.provider,
        'mediagate.attempt': task.attempts,
      },
    },
    contextOf(api, task.request.traceparent),
  );
  return api.context
    .with(api.trace.setSpan(api.context.active(), span), fn)
    .catch((err: unknown) => {
      failSpan(span, err);
      throw err;
    })
    .finally(() => span.end());
}
