import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ChatProvider, ChatStreamEvent } from '../../../src/chat/types.js';
import { sseData } from '../../helpers/chat.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { within } from '../../helpers/within.js';

// A provider that has accepted the request ('open') opens the caller's stream at once: status line
// and role chunk before the first token, so a client is ready when the token comes.
//
// Causality, not timing: the provider below says 'open' and then waits on a gate only this test
// opens; the token it then yields is the text the test hands to the gate. So the status line and
// the role chunk can only have come from 'open', and the token only after the gate opened.

/** A chat provider that opens its stream, then waits for the test to hand it its only token. */
function gatedProvider() {
  let release!: (token: string) => void;
  const gate = new Promise<string>((resolve) => {
    release = resolve;
  });
  let reached!: () => void;
  const atGate = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const state = { gateOpen: false };
  const provider: ChatProvider = {
    id: 'gated',
    complete() {
      return Promise.reject(new Error('this test streams only'));
    },
    async *stream(): AsyncIterable<ChatStreamEvent> {
      yield { type: 'open' };
      reached();
      const token = await gate;
      yield { type: 'delta', content: token };
      yield { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    },
  };
  return {
    provider,
    atGate,
    state,
    open(token: string) {
      state.gateOpen = true;
      release(token);
    },
  };
}

const gated = gatedProvider();
let h: Harness;
let url: string;
beforeAll(async () => {
  h = await createHarness({
    workers: false,
    chatProviders: [gated.provider],
    chatRoutes: { '*': 'gated' },
    // No heartbeat ping could carry the held role chunk out: only 'open' can have sent it.
    env: { MEDIAGATE_CHAT_HEARTBEAT_MS: '600000' },
  });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  gated.open(''); // never leave the provider (and so the server's close) hanging
  await h.close();
});

it('the role chunk arrives before the first token, the token once the provider yields it', async () => {
  const decoder = new TextDecoder();
  // While the gate is closed the provider has yielded nothing but 'open'. If 'open' did not open
  // the caller's stream, neither the response headers nor the role chunk would come: these bounds
  // only turn that hang into a failure.
  const res = await within(
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...h.auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    }),
    10_000,
    'the response headers before the first token',
  );
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();

  let first = '';
  while (!first.includes('\n\n')) {
    const r = await within(reader.read(), 10_000, 'the role chunk before the first token');
    expect(r.done).toBe(false);
    first += decoder.decode(r.value, { stream: true });
  }
  await gated.atGate;
  expect(gated.state.gateOpen).toBe(false);
  const before = sseData(first);
  expect(before).toHaveLength(1);
  const roleChunk = before[0] as Record<string, any>;
  expect(roleChunk.object).toBe('chat.completion.chunk');
  expect(roleChunk.choices[0].delta.role).toBe('assistant');
  expect(roleChunk.choices[0].delta.content ?? '').toBe(''); // no token yet

  // The token exists only from here on: the test makes it up as it opens the gate.
  gated.open('gate-token-42');
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value, { stream: true });
  const after = sseData(rest);
  const contents = after.flatMap((c) => (c === '[DONE]' ? [] : [c.choices?.[0]?.delta?.content].filter((x): x is string => typeof x === 'string' && x !== '')));
  expect(contents).toEqual(['gate-token-42']);
  expect(after.at(-1)).toBe('[DONE]');
  expect(rest.trimEnd().endsWith('data: [DONE]')).toBe(true);
});
