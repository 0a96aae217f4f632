/**
 * The OpenAI-compatible chat upstream fed replies of the wrong shape (G58, G465): a completion or a
 * stream chunk answered 2xx with any of them is a reply (text, with usage in whole tokens a
 * caller can be charged for) or the 502 `upstream_error` of G58, never a TypeError (a 500) and never
 * the channel's fault: the upstream took the call and generated (and billed) the reply, so it is
 * not generated again at the next candidate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatContext, ChatRequest, ChatStreamEvent, ChatUsage } from '../../src/chat/types.js';
import { AppError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { createOpenAiChatProvider, type OpenAiChatProvider } from '../../src/providers/openai/chat.js';
import { ChannelError } from '../../src/providers/types.js';
import { malformedVariants, startScriptedUpstream, type Reply, type ScriptedUpstream } from '../helpers/malformed-replies.js';

let upstream: ScriptedUpstream;
let chat: OpenAiChatProvider;
let next: Reply = { body: '' };

beforeAll(async () => {
  upstream = await startScriptedUpstream(() => next);
  chat = createOpenAiChatProvider({
    id: 'openai:up',
    baseUrl: `${upstream.origin}/v1`,
    apiKey: 'sk-up-key-0123456789',
    timeoutMs: 10_000,
    connectTimeoutMs: 5000,
  });
});
afterAll(async () => {
  await chat?.close();
  await upstream?.close();
});

const ctx = (): ChatContext => ({ signal: new AbortController().signal, log: createLogger('silent'), upstreamModel: 'gpt-4o-mini' });
const request: ChatRequest = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'Say hello' }], stop: [] };

const usageIsWhole = (u: ChatUsage): boolean =>
  [u.prompt_tokens, u.completion_tokens, u.total_tokens].every((n) => Number.isSafeInteger(n) && n >= 0) &&
  u.total_tokens === u.prompt_tokens + u.completion_tokens;

/** What the call came to: a reply whose text and usage are sound, the 502 of G58, or something else (wrong). */
function judged(outcome: { reply: ChatCompletion } | { error: unknown }): string | undefined {
  if ('reply' in outcome) {
    const { content, usage } = outcome.reply;
    return typeof content === 'string' && usageIsWhole(usage) ? undefined : `a reply of ${JSON.stringify(outcome.reply)}`;
  }
  const err = outcome.error;
  if (err instanceof ChannelError) return `the channel's fault (the next candidate would generate it again): ${err.message}`;
  if (err instanceof AppError && err.code === 'upstream_error' && err.status === 502) return undefined;
  return `${(err as Error).name}: ${(err as Error).message}`;
}

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
};

describe('openai chat: completions answered 200 with the wrong shape', () => {
  it('each is a sound reply or the 502 upstream_error, never the channel fault', async () => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants(completion)) {
      next = { body };
      const outcome = await chat.complete(request, ctx()).then(
        (reply) => ({ reply }),
        (error: unknown) => ({ error }),
      );
      const bad = judged(outcome);
      if (bad) wrong.push(`${name}: ${bad}`);
    }
    expect(wrong).toEqual([]);
  });
});

async function streamed(): Promise<{ reply: ChatCompletion } | { error: unknown }> {
  let content = '';
  try {
    for await (const ev of chat.stream(request, ctx()) as AsyncIterable<ChatStreamEvent>) {
      if (ev.type === 'delta') content += ev.content;
      if (ev.type === 'done') return { reply: { content, finishReason: ev.finishReason, usage: ev.usage } };
    }
    return { error: new Error('the stream ended without done') };
  } catch (error) {
    return { error };
  }
}

const sse = (...chunks: unknown[]): Reply => ({
  headers: { 'content-type': 'text/event-stream' },
  body: `${chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`,
});

describe('openai chat: stream chunks of the wrong shape', () => {
  const delta = { id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] };
  const usage = { id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } };

  it.each([
    ['content', delta, (chunk: unknown) => sse(chunk, usage)],
    ['usage', usage, (chunk: unknown) => sse(delta, chunk)],
  ] as const)('a %s chunk of the wrong shape: a sound reply or the 502 upstream_error', async (_, sound, stream) => {
    const wrong: string[] = [];
    for (const [name, chunk] of malformedVariants(sound)) {
      next = stream(chunk);
      const bad = judged(await streamed());
      if (bad) wrong.push(`${name}: ${bad}`);
    }
    expect(wrong).toEqual([]);
  });
});
