/**
 * How the relay classifies failures of a scripted upstream (G97, G98): 429 with
 * Retry-After, 5xx, malformed JSON, resets, hangs, a refused connection, a name that does not
 * resolve, cancel answers, and chat streams (pass-through, counted usage, errors mid-stream).
 * No message carries the upstream's address or key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../src/chat/types.js';
import { planMotionTask } from '../../src/contract/motion.js';
import { AppError } from '../../src/errors.js';
import { createRelayProvider, type RelayProviderOptions } from '../../src/providers/relay/index.js';
import { ChannelError, UnexpectedReply, type Provider } from '../../src/providers/types.js';
import { freePort } from '../helpers/listening-gateway.js';
import { asBody, jobOfPlan } from '../helpers/provider-jobs.js';
import { chatContext, chatRequest, context, failureOf, KEY, picJob } from '../helpers/relay-unit.js';

async function drain(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** No message may name where the upstream is or the key. */
function expectNoSecrets(err: Error, ...addresses: string[]): void {
  for (const a of [KEY, ...addresses]) expect(err.message).not.toContain(a);
}

type Script = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

describe('against a scripted upstream', () => {
  let server: http.Server;
  let origin = '';
  let script: Script = (_req, _body, res) => {
    res.writeHead(500).end();
  };
  const seen: Array<{ method: string; path: string }> = [];
  const providers: Provider[] = [];
  const relay = (options: Partial<RelayProviderOptions> = {}): Provider => {
    const p = createRelayProvider({ id: 'scripted', baseUrl: origin, apiKey: KEY, ...options });
    providers.push(p);
    return p;
  };
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        seen.push({ method: req.method!, path: req.url! });
        script(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const p of providers) await p.close?.();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const host = () => new URL(origin).host;
  const ref = { id: 'up1', data: { family: 'pic', form: null, query: { base: 'base', path: '/v1/result/up1' } } };

  it("429 with Retry-After at create: the channel's fault, with the upstream's wait", async () => {
    script = (_q, _b, res) =>
      json(res, 429, { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limited' } }, { 'retry-after': '7' });
    const err = await failureOf(relay().start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).retryAfterMs).toBe(7000);
    expect((err as ChannelError).code).toBe('rate_limited');
  });

  it("429 at a check: the check is tried again after the upstream's wait", async () => {
    script = (_q, _b, res) => json(res, 429, {}, { 'retry-after': '3' });
    const err = await failureOf(relay().check!(ref, picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).retryAfterMs).toBe(3000);
  });

  it.each([500, 502, 503])("%i at create and at a check: the channel's fault", async (status) => {
    script = (_q, _b, res) => json(res, status, { error: { message: `boom at ${origin}` } });
    const created = await failureOf(relay().start!(picJob(), context()));
    const checked = await failureOf(relay().check!(ref, picJob(), context()));
    for (const err of [created, checked]) {
      expect(err).toBeInstanceOf(ChannelError);
      expect(err.message).toContain(`(HTTP ${status})`);
      expectNoSecrets(err, host());
    }
  });

  it.each([
    ['malformed JSON', (res: http.ServerResponse) => json(res, 200, '{"id": "x", ')],
    ['a task object without an id', (res: http.ServerResponse) => json(res, 200, { status: 'queued' })],
    ['a JSON array', (res: http.ServerResponse) => json(res, 200, '[]')],
  ])("%s at create: a reply problem of this task, not the channel's fault (G272)", async (_name, answer) => {
    script = (_q, _b, res) => answer(res);
    const err = await failureOf(relay().start!(picJob(), context()));
    expect(err).toBeInstanceOf(UnexpectedReply);
    expect(err.message).toMatch(/the relay upstream "scripted" answered with/);
  });

  it('a completed task without its result URL at a check: a reply problem of this task (looked at again, G272)', async () => {
    script = (_q, _b, res) => json(res, 200, { id: 'up1', status: 'completed', image_url: null });
    expect(await failureOf(relay().check!(ref, picJob(), context()))).toBeInstanceOf(UnexpectedReply);
  });

  it('the create is sent as the contract says: path, key, Idempotency-Key, JSON', async () => {
    let got: { headers: http.IncomingHttpHeaders; body: string; path: string } | undefined;
    script = (req, body, res) => {
      got = { headers: req.headers, body, path: req.url! };
      json(res, 200, { id: 'up7', status: 'queued', progress: 0 });
    };
    const job = picJob({ generation: 2 });
    const started = await relay().start!(job, context());
    expect(started).toEqual({
      state: 'started',
      ref: { id: 'up7', data: { family: 'pic', form: null, query: { base: 'base', path: '/v1/result/up7' } } },
      progress: 0,
    });
    expect(got!.path).toBe('/v1/pic/images');
    expect(got!.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': `${job.taskId}.2` });
    expect(JSON.parse(got!.body)).toEqual({ model: 'pic', prompt: 'errors' });
  });

  it('a create that reports progress 100 (or a fraction) starts at most at 99, whole: only a finished task is at 100 (G117)', async () => {
    script = (_q, _b, res) => json(res, 200, { id: 'up8', status: 'processing', progress: 100 });
    expect(await relay().start!(picJob(), context())).toMatchObject({ state: 'started', progress: 99 });
    script = (_q, _b, res) => json(res, 200, { id: 'up9', status: 'processing', progress: 12.7 });
    expect(await relay().start!(picJob(), context())).toMatchObject({ state: 'started', progress: 12 });
  });

  it("a connection reset: the channel's fault", async () => {
    script = (req) => {
      req.socket.destroy();
    };
    const err = await failureOf(relay().start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(/^the connection to the relay upstream "scripted" broke before its answer was complete \(/);
    expectNoSecrets(err, host());
  });

  it('an upstream that never answers: a timeout after timeoutMs, the connection dropped', async () => {
    let closed = false;
    script = (_q, _b, res) => {
      res.on('close', () => {
        closed = true;
      });
    };
    const err = await failureOf(relay({ timeoutMs: 300 }).start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).code).toBe('upstream_timeout');
    expect(err.message).toBe('the relay upstream "scripted" did not answer within 300 ms');
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(true);
  });

  it("a refused connection: the channel's fault, naming neither host nor port", async () => {
    const port = await freePort();
    const err = await failureOf(relay({ baseUrl: `http://127.0.0.1:${port}` }).start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).toBe('could not connect to the relay upstream "scripted": connection refused (is it running, and is its address right?)');
    expectNoSecrets(err, String(port));
  });

  it("a host name that does not resolve: the channel's fault, not naming it", async () => {
    const err = await failureOf(relay({ baseUrl: 'http://relay-upstream.invalid', connectTimeoutMs: 2000 }).start!(picJob(), context()));
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).not.toContain('relay-upstream.invalid');
  });

  it('a cancel the upstream answers 409 (finished there) or 404 (gone) is done; a 503 is reported', async () => {
    const motion = jobOfPlan(planMotionTask(asBody({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'errors' }] })), 'motion_2_0_4s_5s');
    for (const status of [200, 404, 409]) {
      script = (_q, _b, res) => json(res, status, {});
      await relay().cancel!(ref, motion, context());
    }
    expect(seen.at(-1)).toEqual({ method: 'POST', path: '/v1/motion/videos/up1/cancel' });
    script = (_q, _b, res) => json(res, 503, {});
    expect(await failureOf(relay().cancel!(ref, motion, context()))).toBeInstanceOf(ChannelError);
    const before = seen.length;
    await relay().cancel!(ref, picJob(), context()); // only motion tasks can be cancelled: nothing is sent
    expect(seen.length).toBe(before);
  });

  describe('chat', () => {
    const sse = (res: http.ServerResponse, events: string[], end = true) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const e of events) res.write(`data: ${e}\n\n`);
      if (end) res.end();
    };
    const chunk = (content: string | null, finish: string | null = null, usage?: unknown) =>
      JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: content === null && finish === null ? [] : [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }],
        ...(usage !== undefined && { usage }),
      });

    it("429 before the stream opens: the channel's fault with the reply code and Retry-After", async () => {
      script = (_q, _b, res) => json(res, 429, { code: '429', msg: 'too many', data: null, success: false }, { 'retry-after': '4' });
      const err = await failureOf(drain(relay().chat!.stream(chatRequest, chatContext())));
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as ChannelError).code).toBe('rate_limited');
      expect((err as ChannelError).headers?.['Retry-After']).toBe('4');
    });

    it("a stream passed through: open, each delta, done with the finish reason and the usage chunk's usage", async () => {
      script = (_q, _b, res) =>
        sse(res, [
          chunk(''),
          chunk('Hel'),
          chunk('lo'),
          chunk(null, 'length'),
          chunk(null, null, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 }),
          '[DONE]',
        ]);
      expect(await drain(relay().chat!.stream(chatRequest, chatContext()))).toEqual([
        { type: 'open' },
        { type: 'delta', content: 'Hel' },
        { type: 'delta', content: 'lo' },
        { type: 'done', finishReason: 'length', usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } },
      ]);
    });

    it('a stream without usage: counted as the gateway counts', async () => {
      script = (_q, _b, res) => sse(res, [chunk('Hello there'), chunk(null, 'stop'), '[DONE]']);
      const events = await drain(relay().chat!.stream(chatRequest, chatContext()));
      const done = events.at(-1) as Extract<ChatStreamEvent, { type: 'done' }>;
      expect(done.type).toBe('done');
      expect(done.usage.completion_tokens).toBeGreaterThan(0);
      expect(done.usage.prompt_tokens).toBeGreaterThan(0);
      expect(done.usage.total_tokens).toBe(done.usage.prompt_tokens + done.usage.completion_tokens);
    });

    it('an error event mid-stream throws after what came before', async () => {
      script = (_q, _b, res) =>
        sse(res, [chunk('Hel'), JSON.stringify({ error: { message: `exploded at ${origin}`, type: 'upstream_error', param: null, code: 'upstream_error' } })]);
      const got: ChatStreamEvent[] = [];
      const err = await failureOf(
        (async () => {
          for await (const e of relay().chat!.stream(chatRequest, chatContext())) got.push(e);
        })(),
      );
      expect(got).toEqual([{ type: 'open' }, { type: 'delta', content: 'Hel' }]);
      expect(err).toBeInstanceOf(AppError);
      expect(err.message).toMatch(/reported an error in the middle of the reply: exploded at \[upstream\]/);
    });

    it('a stream that ends without [DONE] or a finish reason throws', async () => {
      script = (_q, _b, res) => sse(res, [chunk('Hel')]);
      expect(await failureOf(drain(relay().chat!.stream(chatRequest, chatContext())))).toBeInstanceOf(AppError);
    });

    it("non-streamed: the envelope's content, finish reason and usage; a malformed one is the channel's fault", async () => {
      script = (_q, _b, res) =>
        json(res, 200, {
          code: '200',
          msg: '成功',
          data: { content: 'Hi', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }, model: 'x', id: 'chatcmpl-1', finish_reason: 'stop' },
          success: true,
        });
      expect(await relay().chat!.complete(chatRequest, chatContext())).toEqual({
        content: 'Hi',
        finishReason: 'stop',
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      });
      script = (_q, _b, res) => json(res, 200, { choices: [] });
      expect(await failureOf(relay().chat!.complete(chatRequest, chatContext()))).toBeInstanceOf(ChannelError);
    });

    it("a chat call that takes longer than chatTimeoutMs before any answer: the channel's fault (504)", async () => {
      script = () => undefined;
      const err = await failureOf(relay({ chatTimeoutMs: 300 }).chat!.complete(chatRequest, chatContext()));
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as ChannelError).status).toBe(504);
    });
  });
});
