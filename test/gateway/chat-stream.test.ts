import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { createSandboxChatProvider } from '../../src/chat/sandbox.js';
import { countTextTokens } from '../../src/chat/tokens.js';
import { scriptedProvider, sseData, parseSse, type ScriptedProvider } from '../helpers/chat.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';

const HEARTBEAT_MS = 40;
const user = (content: string) => ({ role: 'user', content });

/** Providers by model: each test uses its own model so their scripts stay apart. */
const providers = {
  flush: scriptedProvider('flush', [{ delta: 'first' }, { delayMs: 400, delta: 'second' }]),
  gap: scriptedProvider('gap', [{ delta: 'a' }, { delayMs: 6 * HEARTBEAT_MS, delta: 'b' }]),
  lateStart: scriptedProvider('late-start', [{ delayMs: 30 * HEARTBEAT_MS, delta: 'late' }, { delta: ' reply' }]),
  lateFail: scriptedProvider('late-fail', [{ delayMs: 5 * HEARTBEAT_MS, fail: new Error('connection reset by upstream') }]),
  endless: scriptedProvider(
    'endless',
    Array.from({ length: 400 }, (_, i) => ({ delayMs: 25, delta: `w${i} ` })),
  ),
} satisfies Record<string, ScriptedProvider>;

let h: Harness;
let url: string;

beforeAll(async () => {
  h = await createHarness({
    workers: false,
    env: { MEDIAGATE_CHAT_HEARTBEAT_MS: String(HEARTBEAT_MS) },
    chatProviders: [createSandboxChatProvider({ tokensPerSecond: 0 }), ...Object.values(providers)],
    chatRoutes: {
      'chat-3-flash-preview': 'flush',
      'chat-2.5-flash-lite': 'gap',
      'chat-3-pro-preview': 'late-start',
      'chat-3.1-pro-preview': 'late-fail',
      'chat-2.5-pro': 'endless',
    },
  });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  await countTextTokens('warm-up'); // the tokenizer thread loads gpt-tokenizer on its first count (G295)
});
afterAll(async () => {
  await h.close();
});

const post = (payload: unknown, init: RequestInit = {}) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...h.auth(), 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    ...init,
  });

/** A POST over node:http, so the test can cut the connection itself. */
async function rawPost(base: string, headers: Record<string, string>, payload: unknown): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' } }, (res) =>
      resolve({ req, res }),
    );
    req.on('error', reject);
    req.end(JSON.stringify(payload));
  });
}

/** Reads a streamed body, noting when each piece arrived (ms since `t0`). */
/** The body's chunks as they arrive, each with how many deltas `provider` had produced by then (order, not milliseconds). */
async function readCounted(res: Response, provider: ScriptedProvider): Promise<Array<{ produced: number; text: string }>> {
  const out: Array<{ produced: number; text: string }> = [];
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
    out.push({ produced: provider.pulled, text: decoder.decode(chunk, { stream: true }) });
  return out;
}

describe('chat SSE over a real HTTP connection', () => {
  it('sandbox stream: headers, role chunk, deltas, finish, usage, [DONE], chunked and not buffered', async () => {
    const res = await post({ model: 'chat-2.5-flash', messages: [user('Stream this please')], stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const text = await res.text();
    // data-only: every block is exactly one `data:` line (or a heartbeat comment, should counting
    // on the tokenizer thread take longer than a heartbeat interval on a loaded machine)
    for (const block of parseSse(text)) expect(block.raw).toMatch(/^(data: .+|: ping)$/);
    const events = sseData(text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Array<Record<string, any>>;
    expect(chunks[0]!.choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-1)!.usage.total_tokens).toBe(chunks.at(-1)!.usage.prompt_tokens + chunks.at(-1)!.usage.completion_tokens);
    expect(
      chunks
        .slice(1, -2)
        .map((c) => c.choices[0].delta.content)
        .join(''),
    ).toContain('You asked: "Stream this please"');
  });

  it('each event is flushed when it is produced (the first delta arrives before the second is made)', async () => {
    const before = providers.flush.pulled;
    const res = await post({ model: 'chat-3-flash-preview', messages: [user('x')], stream: true });
    const pieces = await readCounted(res, providers.flush);
    // the client holds "first" while the provider still waits 400 ms before making "second"
    expect(pieces.find((p) => p.text.includes('"first"'))!.produced - before).toBe(1);
    expect(pieces.find((p) => p.text.includes('"second"'))!.produced - before).toBe(2);
  });

  it('heartbeat comments are sent while waiting for the next delta', async () => {
    const text = await (await post({ model: 'chat-2.5-flash-lite', messages: [user('x')], stream: true })).text();
    const blocks = parseSse(text);
    const a = blocks.findIndex((b) => b.data?.includes('"content":"a"'));
    const b = blocks.findIndex((b2) => b2.data?.includes('"content":"b"'));
    const pings = blocks.slice(a + 1, b).filter((x) => x.comments.includes('ping'));
    expect(pings.length).toBeGreaterThanOrEqual(2);
    expect(blocks.slice(a + 1, b).every((x) => x.data === undefined)).toBe(true);
    expect(sseData(text).at(-1)).toBe('[DONE]');
  });

  it('a slow first token: the stream opens after one heartbeat interval and pings until the reply comes', async () => {
    const before = providers.lateStart.pulled;
    const res = await post({ model: 'chat-3-pro-preview', messages: [user('x')], stream: true });
    expect(res.status).toBe(200);
    // the stream opened (its headers here) before the first token was made, 30 heartbeats later
    expect(providers.lateStart.pulled).toBe(before);
    const text = await res.text();
    const blocks = parseSse(text);
    expect(blocks[0]!.data).toContain('"role":"assistant"');
    expect(blocks.filter((b) => b.comments.includes('ping')).length).toBeGreaterThanOrEqual(2);
    const content = (sseData(text).filter((e) => e !== '[DONE]') as Array<Record<string, any>>).map((e) => e.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('late reply');
  });

  it('a provider failure after the stream opened ends it with an error event, no [DONE]', async () => {
    const res = await post({ model: 'chat-3.1-pro-preview', messages: [user('x')], stream: true });
    expect(res.status).toBe(200);
    const events = sseData(await res.text());
    expect(events).not.toContain('[DONE]');
    expect(events.at(-1)).toEqual({ error: { message: 'Internal server error', type: 'server_error', param: null, code: 'internal_error' } });
  });

  it('a client that disconnects mid-stream aborts the provider; what was sent is billed', async () => {
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    const before = (await h.store.usage.chatUsageByKey(keyId)).find((r) => r.model === 'chat-2.5-pro')?.requests ?? 0;
    const { req, res } = await rawPost(url, h.auth(), { model: 'chat-2.5-pro', messages: [user('go on forever')], stream: true });
    let seen = '';
    await new Promise<void>((resolve) =>
      res.on('data', (c: Buffer) => {
        seen += c.toString();
        if (seen.includes('w2 ')) resolve();
      }),
    );
    req.destroy();
    const signal = providers.endless.signals.at(-1)!;
    await waitFor(() => (signal.aborted ? true : undefined), 3000, 'the provider to be aborted');
    expect(providers.endless.pulled).toBeLessThan(50);
    const row = await waitFor(
      async () => (await h.store.usage.chatUsageByKey(keyId)).find((r) => r.model === 'chat-2.5-pro' && r.requests > before),
      3000,
      'the usage row',
    );
    expect(row.completionTokens).toBeGreaterThan(0);
  });

  it('a client that disconnects during a non-streaming completion aborts the provider', async () => {
    const calls = providers.endless.signals.length;
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers: { ...h.auth(), 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'chat-2.5-pro', messages: [user('x')] }));
    await waitFor(() => (providers.endless.signals.length > calls ? true : undefined), 3000, 'the call to start');
    const signal = providers.endless.signals.at(-1)!;
    await new Promise((r) => setTimeout(r, 60));
    expect(signal.aborted).toBe(false);
    req.destroy();
    await waitFor(() => (signal.aborted ? true : undefined), 3000, 'the provider to be aborted');
  });

  it('backpressure: a client that stops reading stops the provider being pulled', async () => {
    const big = 'x'.repeat(64 * 1024);
    const n = 1000;
    const flood = scriptedProvider(
      'flood',
      Array.from({ length: n }, () => ({ delta: big })),
    );
    const h2 = await createHarness({ workers: false, chatProviders: [createSandboxChatProvider({ tokensPerSecond: 0 }), flood], chatRoutes: { '*': 'flood' } });
    try {
      const url2 = await h2.app.listen({ port: 0, host: '127.0.0.1' });
      const { res } = await rawPost(url2, h2.auth(), { model: 'chat-2.5-pro', messages: [user('x')], stream: true });
      res.pause();
      await new Promise((r) => setTimeout(r, 500));
      const pulledWhilePaused = flood.pulled;
      expect(pulledWhilePaused).toBeLessThan(n / 2);
      let total = 0;
      let tail = '';
      res.on('data', (c: Buffer) => {
        total += c.length;
        tail = (tail + c.toString('latin1')).slice(-64);
      });
      res.resume();
      await new Promise((r) => res.on('end', r));
      expect(flood.pulled).toBe(n);
      expect(total).toBeGreaterThan(n * big.length);
      expect(tail).toContain('data: [DONE]');
    } finally {
      await h2.close();
    }
  });
});
