/**
 * Chat gateway to gateway (G98): a relaying mediagate routes every chat model to the
 * relay, `chat-2.5-flash` under the upstream name `chat-3-pro-preview`; the upstream mediagate
 * answers with its sandbox. The relayed envelope and stream carry exactly what the upstream
 * answers to the same request, under the caller's model name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sseData } from '../../helpers/chat.js';
import { callRelaying, startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';

let pair: RelayPair;
beforeAll(async () => {
  pair = await startRelayPair({ chatModel: (model) => (model === 'chat-2.5-flash' ? 'chat-3-pro-preview' : undefined) });
}, 60_000);
afterAll(async () => {
  await pair?.close();
});

const call = (method: 'GET' | 'POST', path: string, body?: unknown) => callRelaying(pair, method, path, body);

describe('chat through the relay', () => {
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Describe the sea in a few words, please.' },
  ];

  /** The upstream's own answer to the same request under the route's model name. */
  async function direct(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${pair.upstream.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pair.upstream.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  it("non-streamed: the upstream's envelope content, finish reason and usage, under the caller's model name", async () => {
    const relayed = await call('POST', '/v1/chat/completions', { model: 'chat-2.5-flash', messages, max_completion_tokens: 400 });
    expect(relayed.status).toBe(200);
    const upstream = (await (await direct({ model: 'chat-3-pro-preview', messages, max_completion_tokens: 400 })).json()) as Record<string, any>;
    expect(relayed.json).toMatchObject({
      code: '200',
      success: true,
      data: { content: upstream.data.content, usage: upstream.data.usage, finish_reason: upstream.data.finish_reason, model: 'chat-2.5-flash' },
    });
    expect(relayed.json.data.content).toContain('chat-3-pro-preview'); // the sandbox names the model it answered as
    // the one chat call the relay made (the direct call above does not go through the proxy)
    const sent = pair.proxy.requests.filter((r) => r.url === '/v1/chat/completions' && JSON.parse(r.body).max_completion_tokens === 400);
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.body)).toEqual({ model: 'chat-3-pro-preview', messages, max_completion_tokens: 400 });
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${pair.upstream.key}`);
  });

  it('streamed: every upstream delta passed on in order, then the finish reason and the usage chunk', async () => {
    const body = { model: 'chat-2.5-flash', messages, stream: true, max_completion_tokens: 7 };
    const res = await fetch(`${pair.relaying.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pair.relaying.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const relayed = sseData(await res.text());
    const upstream = sseData(await (await direct({ ...body, model: 'chat-3-pro-preview' })).text());
    const deltas = (events: typeof relayed) =>
      events.flatMap((e) =>
        e !== '[DONE]' && typeof e.choices?.[0]?.delta?.content === 'string' && e.choices[0].delta.content !== '' ? [e.choices[0].delta.content as string] : [],
      );
    expect(deltas(relayed).length).toBeGreaterThan(1);
    expect(deltas(relayed)).toEqual(deltas(upstream));
    const chunks = (events: typeof relayed) => events.filter((e): e is Record<string, any> => e !== '[DONE]');
    const finish = (events: typeof relayed) => chunks(events).find((e) => e.choices?.[0]?.finish_reason)?.choices[0].finish_reason;
    expect(finish(relayed)).toBe('length');
    expect(finish(upstream)).toBe('length');
    const usage = (events: typeof relayed) => chunks(events).find((e) => e.usage)?.usage;
    expect(usage(relayed)).toEqual(usage(upstream));
    expect(usage(relayed).completion_tokens).toBe(7);
    expect(relayed.at(-1)).toBe('[DONE]');
    expect(relayed.every((e) => e === '[DONE]' || e.model === 'chat-2.5-flash')).toBe(true);
  });
});
