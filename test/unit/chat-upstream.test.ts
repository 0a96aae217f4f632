import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatContext, ChatRequest, ChatStreamEvent } from '../../src/chat/types.js';
import { AppError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { createOpenAiChatProvider, type OpenAiChatProvider, type OpenAiChatProviderOptions } from '../../src/providers/openai/chat.js';
import { ChannelError } from '../../src/providers/types.js';
import {
  breakAfter,
  endless,
  errorEventAfter,
  errorReply,
  hang,
  malformedJson,
  rawStream,
  reply,
  stallAfter,
  startFakeOpenAi,
  type FakeOpenAi,
} from '../helpers/fake-openai.js';
import { within } from '../helpers/within.js';

const KEY = 'sk-test-upstream-secret-0123456789';
const log = createLogger('silent');

let fake: FakeOpenAi;
const providers: OpenAiChatProvider[] = [];

function provider(over: Partial<OpenAiChatProviderOptions> = {}): OpenAiChatProvider {
  const p = createOpenAiChatProvider({
    id: 'openai:test',
    baseUrl: fake.baseUrl,
    apiKey: KEY,
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    ...over,
  });
  providers.push(p);
  return p;
}

/** The route of these tests: chat-2.5-flash is gpt-4o-mini at the upstream (chat-2.5-pro, gpt-4o: `upstreamModel`). */
function ctx(signal: AbortSignal = new AbortController().signal, upstreamModel = 'gpt-4o-mini'): ChatContext {
  return { signal, log, upstreamModel };
}

function request(over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'Say hello' }], stop: [], ...over };
}

/** The events after the one `open` event, which must come first (before any delta). */
async function collect(iter: AsyncIterable<ChatStreamEvent>, seen: ChatStreamEvent[] = []): Promise<ChatStreamEvent[]> {
  let opened = false;
  for await (const ev of iter) {
    if (ev.type === 'open') {
      expect([opened, seen.length]).toEqual([false, 0]);
      opened = true;
    } else {
      seen.push(ev);
    }
  }
  return seen;
}

const GENEROUS_MS = 10_000;
/** A total timeout no test waits for: it cannot be what ends a call within GENEROUS_MS. */
const NEVER_MS = 600_000;

async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterEach(() => {
  fake.requests.length = 0;
  fake.behave(reply({ content: 'Hello there!' }));
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await fake.close();
});

describe('OpenAI-compatible upstream: success', () => {
  it('complete(): content, finish_reason, usage and the body sent upstream', async () => {
    fake.behave(reply({ content: 'Hello there!', finishReason: 'length', usage: { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 } }));
    const out = await provider().complete(
      request({
        model: 'chat-2.5-pro',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this picture?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
        ],
        temperature: 0.3,
        top_p: 0.9,
        max_completion_tokens: 50,
        stop: ['END', '###'],
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
      }),
      ctx(undefined, 'gpt-4o'),
    );
    expect(out).toEqual({ content: 'Hello there!', finishReason: 'length', usage: { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 } });
    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 50,
      stop: ['END', '###'],
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
    });
  });

  it('sends only what was given; no key, no Authorization header; max_tokens variants', async () => {
    await provider({ apiKey: undefined }).complete(request(), ctx());
    expect(fake.requests[0]!.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    await provider({ maxTokensParam: 'max_tokens' }).complete(request({ max_completion_tokens: 7 }), ctx());
    expect(fake.requests[1]!.body.max_tokens).toBe(7);
    expect(fake.requests[1]!.body.max_completion_tokens).toBeUndefined();
    await provider({ maxTokensParam: 'both' }).complete(request({ max_completion_tokens: 8 }), ctx());
    expect(fake.requests[2]!.body).toMatchObject({ max_tokens: 8, max_completion_tokens: 8 });
  });

  it('maps finish reasons: content_filter and unknown -> stop, length -> length', async () => {
    fake.behave(reply({ content: 'x', finishReason: 'content_filter' }));
    expect((await provider().complete(request(), ctx())).finishReason).toBe('stop');
    fake.behave(reply({ content: 'x', finishReason: null }));
    expect((await provider().complete(request(), ctx())).finishReason).toBe('stop');
  });

  it('counts usage with the tokenizer when the upstream reports none', async () => {
    fake.behave(reply({ content: 'Hello there, general Kenobi!', usage: null }));
    const out = await provider().complete(request(), ctx());
    expect(out.usage.completion_tokens).toBeGreaterThan(3);
    expect(out.usage.prompt_tokens).toBeGreaterThan(3);
    expect(out.usage.total_tokens).toBe(out.usage.prompt_tokens + out.usage.completion_tokens);
  });

  it('stream(): deltas in order, then one done with finish_reason and the usage chunk', async () => {
    fake.behave(reply({ content: 'one two three four', usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }, chunkDelayMs: 2 }));
    const events = await collect(provider().stream(request({ temperature: 1.2, stop: ['x'] }), ctx()));
    expect(events.filter((e) => e.type === 'delta').map((e) => (e as { content: string }).content)).toEqual(['one ', 'two ', 'three ', 'four']);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(fake.requests[0]!.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 1.2,
      stop: ['x'],
    });
  });

  it('stream(): parses CRLF, comments and bytes split anywhere (inside UTF-8 characters too)', async () => {
    const content = 'Grüße aus Köln — 你好 🌍 end';
    fake.behave(reply({ content, splitBytes: 3, crlf: true, comments: true, finishReason: 'length' }));
    const events = await collect(provider().stream(request(), ctx()));
    expect(
      events
        .filter((e) => e.type === 'delta')
        .map((e) => (e as { content: string }).content)
        .join(''),
    ).toBe(content);
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'length' });
  });

  it('stream(): multi-line data events and a stream without usage (counted) or [DONE] (finish_reason given)', async () => {
    const chunk = (c: Record<string, unknown>) =>
      JSON.stringify({ choices: [c] }, null, 1)
        .split('\n')
        .map((l) => `data: ${l}`)
        .join('\n');
    fake.behave(
      rawStream(`${chunk({ delta: { content: 'Hi' }, finish_reason: null })}\n\n${chunk({ delta: { content: ' you' }, finish_reason: 'stop' })}\n\n`),
    );
    const events = await collect(provider().stream(request(), ctx()));
    expect(events.slice(0, 2)).toEqual([
      { type: 'delta', content: 'Hi' },
      { type: 'delta', content: ' you' },
    ]);
    const done = events[2] as Extract<ChatStreamEvent, { type: 'done' }>;
    expect(done.finishReason).toBe('stop');
    expect(done.usage.completion_tokens).toBeGreaterThan(0);
    expect(done.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('stream(): an upstream that ignores stream:true and answers JSON gives one delta and done', async () => {
    fake.behave(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          choices: [{ message: { content: 'whole' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
        }),
      );
    });
    expect(await collect(provider().stream(request(), ctx()))).toEqual([
      { type: 'delta', content: 'whole' },
      { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } },
    ]);
  });
});

describe('OpenAI-compatible upstream: errors', () => {
  it('401 -> 502 upstream_error for the operator, without the key', async () => {
    fake.behave(errorReply(401, { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    for (const call of [provider().complete(request(), ctx()), collect(provider().stream(request(), ctx()))]) {
      const err = await rejection(call);
      expect(err.code).toBe('upstream_error');
      expect(err.status).toBe(502);
      expect(err.message).toMatch(/rejected the gateway's credentials.*check/);
      expect(err.message).not.toContain(KEY);
      expect(err.message).not.toContain('sk-test');
    }
  });

  it('403 -> 502 upstream_error', async () => {
    fake.behave(errorReply(403, { error: { message: 'forbidden' } }));
    const err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
  });

  it('429 -> 429 rate_limited with Retry-After passed through, or a default', async () => {
    fake.behave(errorReply(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '17' }));
    let err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status, err.headers]).toEqual(['rate_limited', 429, { 'Retry-After': '17' }]);
    fake.behave(errorReply(429, { error: { message: 'slow down' } }));
    err = await rejection(collect(provider().stream(request(), ctx())));
    expect(err.code).toBe('rate_limited');
    expect(err.headers).toEqual({ 'Retry-After': '5' });
  });

  it('429 insufficient_quota -> 502 (not a rate limit)', async () => {
    fake.behave(errorReply(429, { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }));
    const err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
    expect(err.message).toMatch(/quota/);
  });

  it('400 context length (OpenAI code, vLLM-style message) -> 400 context_length_exceeded', async () => {
    fake.behave(
      errorReply(400, {
        error: {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
    );
    let err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status, err.param]).toEqual(['context_length_exceeded', 400, 'messages']);
    expect(err.message).toMatch(/too long for chat-2.5-flash.*128000/);
    fake.behave(
      errorReply(400, {
        object: 'error',
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        type: 'BadRequestError',
        code: 400,
      }),
    );
    err = await rejection(collect(provider().stream(request(), ctx())));
    expect([err.code, err.status]).toEqual(['context_length_exceeded', 400]);
  });

  it('other 400 and 404 -> 502 upstream_error naming the status', async () => {
    fake.behave(errorReply(404, { error: { message: 'The model `gpt-9` does not exist', code: 'model_not_found' } }));
    let err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
    expect(err.message).toContain('HTTP 404');
    expect(err.message).toContain('does not exist');
    fake.behave(errorReply(400, { error: { message: 'Invalid value for temperature' } }));
    err = await rejection(provider().complete(request(), ctx()));
    expect(err.message).toContain('HTTP 400');
  });

  it('500 and 503 -> 502 upstream_error (retryable)', async () => {
    for (const status of [500, 503]) {
      fake.behave(errorReply(status, 'Internal Server Error'));
      const err = await rejection(provider().complete(request(), ctx()));
      expect([err.code, err.status, err.retryable]).toEqual(['upstream_error', 502, true]);
      expect(err.message).toContain(`HTTP ${status}`);
    }
  });

  it('an error answer larger than the 64 KiB read is taken by its status, cut there (G478)', async () => {
    const page = `<html>${'x'.repeat(2 * 1024 * 1024)}</html>`; // a proxy's error page
    fake.behave(errorReply(503, page));
    let err = await rejection(provider().complete(request(), ctx()));
    expect(err).toBeInstanceOf(ChannelError); // the channel's fault: another channel may answer
    expect([err.code, err.status, err.retryable]).toEqual(['upstream_error', 502, true]);
    expect(err.message).toContain('HTTP 503');
    fake.behave(errorReply(429, page, { 'retry-after': '17' }));
    err = await rejection(collect(provider().stream(request(), ctx())));
    expect(err).toBeInstanceOf(ChannelError);
    expect([err.code, err.status, err.headers]).toEqual(['rate_limited', 429, { 'Retry-After': '17' }]);
  });

  it('malformed JSON -> 502 upstream_error', async () => {
    fake.behave(malformedJson());
    const err = await rejection(provider().complete(request(), ctx()));
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
    expect(err.message).toMatch(/malformed JSON/);
  });

  it('connection refused -> 502 upstream_error', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const p = provider({ baseUrl: `http://127.0.0.1:${port}/v1` });
    let err = await rejection(p.complete(request(), ctx()));
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
    expect(err.message).toMatch(/connection refused/);
    err = await rejection(collect(p.stream(request(), ctx())));
    expect(err.code).toBe('upstream_error');
  });

  it('a slow upstream -> 504 upstream_timeout, not before the timeout (complete and stream)', async () => {
    // The upstream never answers: only the provider's own 300 ms timeout can end the call. It
    // cannot end it before 300 ms (a timer does not fire early: the causal lower bound), and
    // without it the call would never end (the generous upper bound catches that).
    fake.behave(hang());
    const timeoutMs = 300;
    const p = provider({ timeoutMs });
    for (const call of [() => p.complete(request(), ctx()), () => collect(p.stream(request(), ctx()))]) {
      const closed = fake.nextClientClose();
      const t0 = performance.now();
      const err = await within(rejection(call()), GENEROUS_MS, 'the 504 of a hanging upstream');
      const took = performance.now() - t0;
      expect([err.code, err.status]).toEqual(['upstream_timeout', 504]);
      expect(err.message).toContain(`within ${timeoutMs} ms`);
      expect(took).toBeGreaterThanOrEqual(timeoutMs - 10);
      await within(closed, GENEROUS_MS, 'the upstream connection to be dropped');
    }
  });

  it('a stream that stalls between chunks -> 504 after the stall timeout', async () => {
    // Two chunks, then silence for ever; the total timeout is far away, so only the stall timer
    // can end the stream, and not before 300 ms of silence after the last chunk.
    fake.behave(stallAfter(2));
    const stallTimeoutMs = 300;
    const seen: ChatStreamEvent[] = [];
    let lastDeltaAt = Number.NaN;
    const run = (async () => {
      for await (const ev of provider({ stallTimeoutMs, timeoutMs: NEVER_MS }).stream(request(), ctx())) {
        if (ev.type === 'open') continue;
        seen.push(ev);
        lastDeltaAt = performance.now();
      }
    })();
    const err = await within(rejection(run), GENEROUS_MS, 'the 504 of a stalled stream');
    const silentFor = performance.now() - lastDeltaAt;
    expect([err.code, err.status]).toEqual(['upstream_timeout', 504]);
    expect(err.message).toContain(`sent nothing for ${stallTimeoutMs} ms`); // the stall timer, not the total timeout
    expect(seen).toEqual([
      { type: 'delta', content: 'part0 ' },
      { type: 'delta', content: 'part1 ' },
    ]);
    expect(silentFor).toBeGreaterThanOrEqual(stallTimeoutMs - 10);
  });
});

describe('OpenAI-compatible upstream: streams that break and aborts', () => {
  it('socket destroyed after 2 chunks -> the iterator throws AppError after the 2 deltas', async () => {
    fake.behave(breakAfter(2));
    const seen: ChatStreamEvent[] = [];
    const err = await rejection(collect(provider().stream(request(), ctx()), seen));
    expect(seen).toEqual([
      { type: 'delta', content: 'part0 ' },
      { type: 'delta', content: 'part1 ' },
    ]);
    expect([err.code, err.status]).toEqual(['upstream_error', 502]);
    expect(err.message).toMatch(/broke before the reply was complete/);
  });

  it('an in-stream error event -> the iterator throws AppError with the upstream message', async () => {
    fake.behave(errorEventAfter(2, 'overloaded, try later'));
    const seen: ChatStreamEvent[] = [];
    const err = await rejection(collect(provider().stream(request(), ctx()), seen));
    expect(seen).toHaveLength(2);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toContain('overloaded, try later');
  });

  it('a malformed chunk mid-stream -> AppError', async () => {
    fake.behave(rawStream('data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: {"choices":[{"delta":\n\n'));
    const seen: ChatStreamEvent[] = [];
    const err = await rejection(collect(provider().stream(request(), ctx()), seen));
    expect(seen).toEqual([{ type: 'delta', content: 'ok' }]);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/malformed stream chunk/);
  });

  it('a stream that just ends without finish_reason or [DONE] -> AppError, not a silent cut', async () => {
    fake.behave(rawStream('data: {"choices":[{"delta":{"content":"half"}}]}\n\n'));
    const err = await rejection(collect(provider().stream(request(), ctx())));
    expect(err.message).toMatch(/ended the stream before the reply was complete/);
  });

  it('aborting ctx.signal mid-stream closes the upstream connection at once', async () => {
    fake.behave(endless(5));
    const ac = new AbortController();
    const closed = fake.nextClientClose();
    const seen: ChatStreamEvent[] = [];
    // The upstream streams for ever and no timeout of the provider is due: only the abort can
    // close the connection, so its closing at all (bound: generous) is the check.
    const run = (async () => {
      for await (const ev of provider({ timeoutMs: NEVER_MS }).stream(request(), ctx(ac.signal))) {
        if (ev.type !== 'open') seen.push(ev);
        if (seen.length === 3) ac.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(3);
    await within(closed, GENEROUS_MS, 'the upstream connection to close after the abort');
    expect(fake.clientCloses).toBeGreaterThan(0);
  });

  it('aborting ctx.signal before headers (complete) closes the upstream request; the reason is rethrown', async () => {
    fake.behave(hang());
    const ac = new AbortController();
    const closed = fake.nextClientClose();
    const call = provider({ timeoutMs: NEVER_MS }).complete(request(), ctx(ac.signal));
    // The request is at the upstream (which never answers) before the abort.
    await within(
      (async () => {
        while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
      })(),
      GENEROUS_MS,
      'the request to reach the upstream',
    );
    const reason = new AppError('upstream_timeout', 'route gave up');
    ac.abort(reason);
    await expect(call).rejects.toBe(reason);
    await within(closed, GENEROUS_MS, 'the upstream request to close after the abort');
  });

  it('a consumer that stops iterating early drops the upstream connection', async () => {
    fake.behave(endless(5));
    const closed = fake.nextClientClose();
    const events = provider({ timeoutMs: NEVER_MS }).stream(request(), ctx())[Symbol.asyncIterator]();
    expect((await events.next()).value).toEqual({ type: 'open' });
    expect((await events.next()).value.type).toBe('delta');
    await events.return?.();
    await within(closed, GENEROUS_MS, 'the upstream connection to close after the consumer stopped');
  });
});
