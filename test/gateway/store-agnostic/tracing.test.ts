/**
 * OpenTelemetry tracing (G227-G229), with an in-memory exporter: a submit's request span, the
 * task's run on the worker as its child (the trace context kept with the task), the upstream call
 * under the run, and the HTTP call to a fake OpenAI Images API carrying that API's `x-request-id`.
 */
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../../src/tracing/start.js';
import { startFakeOpenAiImages, type FakeOpenAiImages } from '../../fakes/openai-images.js';
import { configFiles } from '../../helpers/config-files.js';
import { reply, startFakeOpenAi } from '../../helpers/fake-openai.js';
import { createHarness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';

const { file } = configFiles('mediagate-tracing-');
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let upstream: FakeOpenAiImages;
let gw: ListeningGateway;

beforeAll(async () => {
  tracing = await startTracing({ exporter });
  upstream = await startFakeOpenAiImages();
  const providers = file({
    providers: { oai: { type: 'openai-images', baseUrl: upstream.baseUrl, apiKeyEnv: 'OAI_KEY' } },
    routes: { pic: [{ provider: 'oai', model: 'dall-e-3' }] },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_OTEL: 'on', MEDIAGATE_PROVIDERS: providers, OAI_KEY: upstream.apiKey } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await tracing?.shutdown();
});

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('tracing', () => {
  it('submit -> task run -> upstream call -> HTTP call, one trace, with the task id and the upstream request id', async () => {
    // the caller's own trace context is continued
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const created = await gw.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { ...gw.auth(), traceparent: `00-${callerTrace}-b7ad6b7169203331-01` },
      payload: { model: 'pic', prompt: 'a traced lighthouse' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id as string;
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.request.traceparent).toMatch(new RegExp(`^00-${callerTrace}-[0-9a-f]{16}-01$`));

    const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
    const run = await waitFor(() => spans().find((s) => s.name === 'task start' && s.attributes['mediagate.task_id'] === id), 5000, 'the task run span');
    const submit = spans().find((s) => s.name === 'POST /v1/pic/images' && s.attributes['mediagate.task_id'] === id)!;
    expect(submit).toBeDefined();
    expect(submit.kind).toBe(SpanKind.SERVER);
    expect(submit.spanContext().traceId).toBe(callerTrace);
    expect(parentOf(submit)).toBe('b7ad6b7169203331');
    expect(submit.attributes).toMatchObject({ 'http.route': '/v1/pic/images', 'http.response.status_code': 200, 'http.request.method': 'POST' });

    // the run is the submit's child, in the same trace
    expect(run.spanContext().traceId).toBe(callerTrace);
    expect(parentOf(run)).toBe(submit.spanContext().spanId);
    expect(run.attributes).toMatchObject({ 'mediagate.family': 'pic', 'mediagate.model': 'pic', 'mediagate.provider': 'oai', 'mediagate.attempt': 1 });

    // the call through the channel under the run, the HTTP call under it with the upstream's id
    const channel = spans().find((s) => s.name === 'upstream oai' && parentOf(s) === run.spanContext().spanId);
    expect(channel?.attributes).toMatchObject({ 'mediagate.channel': 'oai', 'mediagate.upstream.outcome': 'ok' });
    const http = spans().filter((s) => s.kind === SpanKind.CLIENT && parentOf(s) === channel!.spanContext().spanId);
    expect(http.map((s) => s.name)).toEqual(['POST oai']);
    const sent = upstream.requests.at(-1)!;
    expect(http[0]!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'mediagate.provider': 'oai',
      'mediagate.upstream.request_id': sent.requestId,
    });
    // no address, path or key in any attribute
    const everything = JSON.stringify(spans().map((s) => s.attributes));
    expect(everything).not.toContain(upstream.apiKey);
    expect(everything).not.toContain('127.0.0.1');
  });

  it('a request without a trace context starts a trace of its own; a poll is a span too', async () => {
    exporter.reset();
    const res = await gw.app.inject({ method: 'GET', url: '/v1/result/task_missing', headers: gw.auth() });
    expect(res.statusCode).toBe(404);
    const span = exporter.getFinishedSpans().find((s) => s.name === 'GET /v1/result/:id');
    expect(span?.attributes).toMatchObject({ 'http.response.status_code': 404, 'mediagate.request_id': res.headers['x-request-id'] });
    expect(parentOf(span!)).toBeUndefined();
  });

  it('a streamed chat: its upstream span lasts the stream, under the request span, with the upstream request id', async () => {
    const chat = await startFakeOpenAi();
    chat.behave((c) => {
      c.res.setHeader('x-request-id', 'req_chat_upstream_42');
      return reply({ content: 'Hello from upstream' })(c);
    });
    const h = await createHarness({
      env: {
        MEDIAGATE_OTEL: 'on',
        MEDIAGATE_CHAT_UPSTREAM_URL: chat.baseUrl,
        MEDIAGATE_CHAT_UPSTREAM_KEY: 'sk-upstream-0123456789',
        MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-flash=tiny-llm',
      },
    });
    try {
      exporter.reset();
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: h.auth(),
        payload: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true },
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('"content":"upstream"');
      expect(res.body).toContain('[DONE]');
      const request = await waitFor(() => exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/chat/completions'), 5000, 'the request span');
      const upstreamSpan = exporter.getFinishedSpans().find((s) => s.name.startsWith('upstream '))!;
      expect(parentOf(upstreamSpan)).toBe(request.spanContext().spanId);
      expect(upstreamSpan.kind).toBe(SpanKind.CLIENT);
      expect(upstreamSpan.attributes).toMatchObject({
        'mediagate.upstream.outcome': 'ok',
        'http.response.status_code': 200,
        'mediagate.upstream.request_id': 'req_chat_upstream_42',
      });
      expect(request.attributes['mediagate.upstream.request_id']).toBeUndefined();
    } finally {
      await h.close();
      await chat.close();
    }
  });
});
