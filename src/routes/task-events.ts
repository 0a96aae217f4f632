import type { FastifyInstance, FastifyReply } from 'fastify';
import { SseWriter } from '../chat/sse.js';
import { NoBody, responses } from '../contract/responses.js';
import { TaskEventStream } from '../contract/task-extras.js';
import { AppError } from '../errors.js';
import { renderErrorBody } from '../contract/error-bodies.js';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { LiveRequests } from '../http/live-requests.js';
import type { TaskRecord, TaskService } from '../tasks/service.js';
import { isFinished } from '../tasks/states.js';
import type { StreamRefusal, TaskStreams } from '../tasks/task-stream.js';
import { TaskIdParams } from './results.js';

/**
 * The id of the block written after the final state's event (an id without data: no event is
 * dispatched, EventSource only keeps it); a reconnect that sends it back as `Last-Event-ID` to a
 * finished task is answered 204, which stops EventSource reconnecting (G460).
 */
export const FINAL_EVENT_ID = 'final';

/**
 * `GET /v1/tasks/{id}/events` (G219-G220): server-sent events, each `id: <n>` and `data: <the
 * family query body>`: the task's state at once, then one event per status or progress change,
 * the last one the terminal state's, after which the stream ends. `: ping` comments keep quiet
 * streams alive. A revoked key, a task deleted meanwhile or the start of a shutdown (G343) end the
 * stream with an `event: error` whose data is the standard error body.
 */
export function registerTaskEventsRoute(app: FastifyInstance, tasks: TaskService, streams: TaskStreams, links: ReplyContext, live: LiveRequests): void {
  app.get<{ Params: { id: string } }>(
    '/v1/tasks/:id/events',
    {
      schema: {
        tags: ['tasks'],
        summary: "A task's status stream (server-sent events) up to its terminal state",
        params: TaskIdParams,
        response: responses(
          {
            200: { description: "The stream of the task's states", content: { 'text/event-stream': { schema: TaskEventStream } } },
            204: NoBody('The task is finished and `Last-Event-ID: final` says the client had its final state: nothing more (stops EventSource reconnecting)'),
          },
          [401, 404, 414, 429, 500, 503],
        ),
      },
    },
    async (request, reply) => {
      const first = await tasks.getOwnedTask(request.apiKey, request.params.id);
      if (isFinished(first.status) && request.headers['last-event-id'] === FINAL_EVENT_ID) {
        // an EventSource reconnecting after the final state: a 204 stops it (G460)
        return reply.code(204).send();
      }
      const gone = live.track(reply, request.apiKeyHash, 'drain'); // a shutdown ends the stream at once (G343)
      let writer: SseWriter | undefined;
      let seq = 0;
      let sent = '';
      let latest: TaskRecord | undefined = first;
      let deleted = false;
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const fail = (err: AppError): void => {
        writer?.sendEvent(JSON.stringify(renderErrorBody('standard', err)), undefined, 'error');
        finish();
      };
      /** Writes the latest state unless it is the one written last; ends after a terminal state. */
      const pump = (): void => {
        if (!writer || writer.isClosed) return;
        if (deleted) {
          fail(new AppError('task_not_found', `No task with id ${first.id}`, { param: 'id' }));
          return;
        }
        const task = latest!;
        const state = `${task.status} ${task.progress}`;
        if (state === sent) return;
        sent = state;
        writer.sendEvent(JSON.stringify(queryReply(task, links)), ++seq);
        if (isFinished(task.status)) {
          writer.sendId(FINAL_EVENT_ID); // what a reconnect sends as Last-Event-ID, to be told there is nothing more (G460)
          finish();
        }
      };
      const onAbort = (): void => {
        const reason: unknown = gone.signal.reason;
        if (reason instanceof AppError) fail(reason);
        else finish();
      };
      const sub = await streams.subscribe(first.id, request.apiKey.id, (task) => {
        if (task) latest = task;
        else deleted = true;
        pump();
      });
      try {
        if ('refused' in sub) throw new AppError('rate_limited', REFUSALS[sub.refused](streams), { headers: { 'retry-after': '5' } });
        reply.hijack();
        writer = new SseWriter(reply.raw, streams.heartbeatMs, headersOf(reply));
        reply.raw.once('close', finish);
        gone.signal.addEventListener('abort', onAbort, { once: true });
        if (gone.signal.aborted) onAbort();
        pump();
        await finished;
        return reply;
      } finally {
        gone.signal.removeEventListener('abort', onAbort);
        if (!('refused' in sub)) sub.close();
        gone.release();
        writer?.end();
      }
    },
  );
}

/** The 429's message for each bound that refuses a stream (G220): the one that did. */
const REFUSALS: Record<StreamRefusal['refused'], (streams: TaskStreams) => string> = {
  key: (streams) => `This API key already has ${streams.perKeyBound} status streams open, the most allowed; close one first`,
  process: (streams) => `This gateway process has ${streams.processBound} status streams open, the most it serves; retry shortly`,
  store: () => "The store cannot count this API key's status streams now; retry shortly",
};

/** Headers already set on the reply (x-request-id), for the hijacked response. */
function headersOf(reply: FastifyReply): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) out[name] = value;
  return out;
}
