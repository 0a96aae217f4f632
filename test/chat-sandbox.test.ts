import { encode } from 'gpt-tokenizer';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createSandboxChatProvider, sandboxReplyText } from '../src/chat/sandbox.js';
import { textPieces } from '../src/chat/tokens.js';
import type { ChatRequest, ChatStreamEvent } from '../src/chat/types.js';
import { AppError } from '../src/errors.js';

const log = pino({ level: 'silent' });
const ctx = (signal = new AbortController().signal) => ({ signal, log });
const req = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: text }], stop: [], ...extra });

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
    expect(events.slice(0, -1).map((e) => (e.type === 'delta' ? e.content : '')).join('')).toBe(whole.content);
    expect(whole.usage.completion_tokens).toBe(encode(whole.content).length);
    // G37: 3 (reply priming) + per message 3 + tokens of the role + tokens of the text
    expect(whole.usage.prompt_tokens).toBe(3 + 3 + encode('user').length + encode('Why is the sky blue?').length);
    // G42: quotes the last user message, counts the messages by role, names the model
    expect(whole.content).toBe('You asked: "Why is the sky blue?". This conversation has 1 message (0 system, 1 user, 0 assistant). '
      + 'This is the mediagate sandbox answering as chat-2.5-flash; the reply is derived from your conversation, not written by a language model.');
  });

  it('never splits a character across deltas (CJK and emoji)', async () => {
    const text = '请解释一下量子计算 🤖🧪 ありがとう';
    const events = await drain(fast.stream(req(text), ctx()));
    for (const e of events) if (e.type === 'delta') expect(e.content).not.toContain('\uFFFD');
    expect(events.map((e) => (e.type === 'delta' ? e.content : '')).join('')).toContain(text);
    for (const sample of ['🤖', '量子计算', 'a🤖b', text]) {
      const pieces = textPieces(sample);
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

  it('streams at the configured rate', async () => {
    const slow = createSandboxChatProvider({ tokensPerSecond: 200 });
    const t0 = Date.now();
    const r = await slow.complete(req('hi'), ctx());
    const elapsed = Date.now() - t0;
    const expected = (r.usage.completion_tokens / 200) * 1000;
    expect(elapsed).toBeGreaterThanOrEqual(expected * 0.9);
    expect(elapsed).toBeLessThan(expected + 500);
  });

  it('stops generating when aborted', async () => {
    const slow = createSandboxChatProvider({ tokensPerSecond: 100 });
    const controller = new AbortController();
    const seen: string[] = [];
    const run = (async () => { for await (const e of slow.stream(req('hello'), ctx(controller.signal))) if (e.type === 'delta') seen.push(e.content); })();
    await new Promise((r) => setTimeout(r, 60));
    controller.abort();
    await expect(run).rejects.toThrow();
    const count = seen.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.length).toBe(count);
    expect(count).toBeLessThan(20);
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
