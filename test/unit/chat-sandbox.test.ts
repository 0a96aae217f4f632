import { encode } from 'gpt-tokenizer';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createSandboxChatProvider, sandboxReplyText } from '../../src/chat/sandbox.js';
import { textPieces } from '../../src/chat/tokens.js';
import type { ChatRequest, ChatStreamEvent } from '../../src/chat/types.js';
import { AppError } from '../../src/errors.js';

const log = pino({ level: 'silent' });
const ctx = (signal = new AbortController().signal) => ({ signal, log, upstreamModel: 'sandbox' });
const req = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'chat-2.5-flash',
  messages: [{ role: 'user', content: text }],
  stop: [],
  ...extra,
});

/** The events after the `open` event, which must come first. */
async function drain(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  expect(out[0]).toEqual({ type: 'open' });
  return out.slice(1);
}

describe('sandbox chat provider', () => {
  const fast = createSandboxChatProvider({ tokensPerSecond: 0 });

  it('streams the same text as complete(), one done event with real token counts', async () => {
    const whole = await fast.complete(req('Why is the sky blue?'), ctx());
    const events = await drain(fast.stream(req('Why is the sky blue?'), ctx()));
    const done = events.at(-1)!;
    expect(done.type).toBe('done');
    expect(events.slice(0, -1).every((e) => e.type === 'delta')).toBe(true);
    expect(
      events
        .slice(0, -1)
        .map((e) => (e.type === 'delta' ? e.content : ''))
        .join(''),
    ).toBe(whole.content);
    expect(whole.usage.completion_tokens).toBe(encode(whole.content).length);
    // G37: 3 (reply priming) + per message 3 + tokens of the role + tokens of the text
    expect(whole.usage.prompt_tokens).toBe(3 + 3 + encode('user').length + encode('Why is the sky blue?').length);
    // G42: quotes the last user message, counts the messages by role, names the model
    expect(whole.content).toBe(
      'You asked: "Why is the sky blue?". This conversation has 1 message (0 system, 1 user, 0 assistant). ' +
        'This is the mediagate sandbox answering as chat-2.5-flash; the reply is derived from your conversation, not written by a language model.',
    );
  });

  it('never splits a character across deltas (CJK and emoji)', async () => {
    const text = '请解释一下量子计算 🤖🧪 ありがとう';
    const events = await drain(fast.stream(req(text), ctx()));
    for (const e of events) if (e.type === 'delta') expect(e.content).not.toContain('\uFFFD');
    expect(events.map((e) => (e.type === 'delta' ? e.content : '')).join('')).toContain(text);
    for (const sample of ['🤖', '量子计算', 'a🤖b', text]) {
      const pieces = await textPieces(sample);
      expect(pieces.map((p) => p.text).join('')).toBe(sample);
      expect(pieces.reduce((n, p) => n + p.tokens, 0)).toBe(encode(sample).length);
    }
  });

  it('a token budget that ends inside a multi-token character keeps whole characters only', async () => {
    for (let max = 1; max <= 20; max++) {
      const r = await fast.complete(req('🤖🧪🤖 量子', { max_completion_tokens: max }), ctx());
      expect(r.content).not.toContain('\uFFFD');
      expect(r.usage.completion_tokens).toBeLessThanOrEqual(max);
      expect(r.finishReason).toBe('length');
    }
    // the shared decoder of gpt-tokenizer is not left dirty: a following reply is clean
    expect((await fast.complete(req('plain'), ctx())).content).toMatch(/^You asked: "plain"/);
  });

  // The rate is checked on an injected clock (fake Date and setTimeout), not the wall clock: the
  // provider schedules token n at n / rate seconds after it starts, so at any instant exactly the
  // pieces due by then are out, and the next one is not out a millisecond before its time.
  it('streams at the configured rate', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: 1_700_000_000_000 });
    try {
      const msPerToken = 5; // 200 tokens/s
      const slow = createSandboxChatProvider({ tokensPerSecond: 1000 / msPerToken });
      const request = req('hi');
      const pieces = await textPieces(sandboxReplyText(request));
      const dueAt: number[] = [];
      pieces.reduce((tokens, p) => {
        dueAt.push((tokens + p.tokens) * msPerToken);
        return tokens + p.tokens;
      }, 0);
      expect(pieces.length).toBeGreaterThan(10);

      const seen: string[] = [];
      let done: ChatStreamEvent | undefined;
      const t0 = Date.now();
      let opened!: () => void;
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const run = (async () => {
        for await (const e of slow.stream(request, ctx())) {
          if (e.type === 'open') opened();
          else if (e.type === 'delta') seen.push(e.content);
          else if (e.type === 'done') done = e;
        }
      })();
      await open; // the reply is planned (its tokens counted on the tokenizer thread): its clock starts
      await vi.advanceTimersByTimeAsync(0);
      expect(seen).toEqual([]); // nothing before the first token's time
      for (let i = 0; i < pieces.length; i++) {
        await vi.advanceTimersByTimeAsync(t0 + dueAt[i]! - 1 - Date.now());
        expect(seen).toHaveLength(i); // never faster than the rate: piece i is not out 1 ms early
        await vi.advanceTimersByTimeAsync(1);
        expect(seen).toHaveLength(i + 1); // and it keeps up: out at its time
      }
      await run;
      expect(seen.join('')).toBe(sandboxReplyText(request));
      expect(done).toMatchObject({ type: 'done', finishReason: 'stop' });
      // The whole reply took exactly completion_tokens / rate on the clock.
      expect(Date.now() - t0).toBe((done as Extract<ChatStreamEvent, { type: 'done' }>).usage.completion_tokens * msPerToken);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops generating when aborted', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: 1_700_000_000_000 });
    try {
      const slow = createSandboxChatProvider({ tokensPerSecond: 100 }); // 10 ms per token
      const request = req('hello');
      const total = (await textPieces(sandboxReplyText(request))).length;
      const controller = new AbortController();
      const seen: string[] = [];
      let opened!: () => void;
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const run = (async () => {
        for await (const e of slow.stream(request, ctx(controller.signal))) {
          if (e.type === 'open') opened();
          else if (e.type === 'delta') seen.push(e.content);
        }
      })();
      const outcome = run.then(
        () => 'finished',
        (err: unknown) => err,
      );
      await open; // planned on the tokenizer thread: the clock starts now
      await vi.advanceTimersByTimeAsync(60);
      const count = seen.length;
      expect(count).toBeGreaterThan(0); // it was generating
      expect(count).toBeLessThan(total); // and had more to say
      controller.abort();
      // Time enough for the whole reply several times over: nothing more comes, and the stream
      // ended with the abort, not with done.
      await vi.advanceTimersByTimeAsync(total * 10 * 5);
      expect(seen).toHaveLength(count);
      expect(await outcome).toBeInstanceOf(Error);
      expect(vi.getTimerCount()).toBe(0); // and no timer of it is left behind
    } finally {
      vi.useRealTimers();
    }
  });

  it('a prompt that fills the context length is a 400; a reply that would overflow it ends with "length"', async () => {
    const small = createSandboxChatProvider({ tokensPerSecond: 0, contextTokens: 40 });
    const err = await small.complete(req('word '.repeat(60)), ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).param).toBe('messages');
    const r = await small.complete(req('hi'), ctx());
    expect(r.finishReason).toBe('length');
    expect(r.usage.total_tokens).toBe(40);
  });

  it('[fail] fails with an upstream error; the reply of a conversation without a user message says so', async () => {
    const err = await fast.complete(req('x [fail] y'), ctx()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    const r = await fast.complete({ model: 'chat-2.5-pro', messages: [{ role: 'system', content: 'only system' }], stop: [] }, ctx());
    expect(r.content).toContain('There is no user message');
  });

  it('names at most 10 attachments and counts the rest', () => {
    const parts = Array.from({ length: 12 }, (_, i) => ({ type: 'image_url' as const, image_url: { url: `https://e.com/${i}.png` } }));
    const text = sandboxReplyText({ model: 'chat-2.5-pro', messages: [{ role: 'user', content: parts }], stop: [] });
    expect(text).toContain('12 images (0.png, 1.png, 2.png, 3.png, 4.png, 5.png, 6.png, 7.png, 8.png, 9.png and 2 more)');
    expect(text).toContain('Your last message has no text.');
  });
});
