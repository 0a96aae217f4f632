import fs from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../../src/main/serve.js';
import { tempDir } from '../../helpers/temp-root.js';
import { errorReply, reply, startFakeOpenAi, type FakeOpenAi } from '../../helpers/fake-openai.js';

const KEY = 'chat-e2e-key-0123456789abcdef';
const UPSTREAM_KEY = 'sk-upstream-secret-0123456789';
let fake: FakeOpenAi;
let server: RunningServer;
let dataDir: string;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  dataDir = tempDir();
  server = await startServer({
    MEDIAGATE_MIN_FREE_DISK_MB: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_LOG_LEVEL: 'silent',
    MEDIAGATE_WORKERS: '0',
    MEDIAGATE_BOOTSTRAP_KEY: KEY,
    MEDIAGATE_CHAT_UPSTREAM_URL: fake.baseUrl,
    MEDIAGATE_CHAT_UPSTREAM_KEY: UPSTREAM_KEY,
    MEDIAGATE_CHAT_UPSTREAM_MODELS: 'chat-2.5-flash=tiny-llm',
  });
  client = new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await fake.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const post = (payload: unknown) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });

describe('chat through the gateway to an OpenAI-compatible upstream', () => {
  it('non-stream: the upstream answer in our envelope, the upstream model name and key sent upstream', async () => {
    fake.behave(reply({ content: 'Hello from upstream', usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }));
    const res = await post({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5, top_p: 0.9 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({
      code: '200',
      msg: '成功',
      success: true,
      data: {
        content: 'Hello from upstream',
        model: 'chat-2.5-flash',
        finish_reason: 'stop',
        usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      },
    });
    const sent = fake.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'tiny-llm', temperature: 0.5, top_p: 0.9 });
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('stream: the official client reads text, finish_reason and usage', async () => {
    fake.behave(reply({ content: 'one two three', chunkDelayMs: 5 }));
    const stream = await client.chat.completions.create({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'count' }], stream: true });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
  });

  it.each([
    ['upstream 401 -> 502 for the operator, upstream key never shown', errorReply(401, { error: { message: `bad key ${UPSTREAM_KEY}` } }), 502, /credentials/],
    ['upstream 429 -> 429 with Retry-After', errorReply(429, { error: { message: 'slow down' } }, { 'retry-after': '7' }), 429, /./],
    [
      'context length -> 400',
      errorReply(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }),
      400,
      /context/i,
    ],
    ['upstream 500 -> 502', errorReply(500, { error: { message: 'boom' } }), 502, /./],
  ])('%s', async (_name, behaviour, status, message) => {
    fake.behave(behaviour);
    const res = await post({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(status);
    const text = await res.text();
    expect(text).not.toContain(UPSTREAM_KEY);
    const body = JSON.parse(text) as Record<string, any>;
    expect(body).toMatchObject({ code: String(status), data: null, success: false });
    expect(body.msg).toMatch(message);
    if (status === 429) expect(res.headers.get('retry-after')).toBe('7');
  });

  it('a stream that breaks mid-way ends with an error the official client raises', async () => {
    fake.behave(async ({ res }) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'tiny-llm', choices: [{ index: 0, delta: { content: 'partial ' }, finish_reason: null }] })}\n\n`,
      );
      await new Promise((r) => setTimeout(r, 30));
      res.socket?.destroy();
    });
    const stream = await client.chat.completions.create({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    await expect(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(text).toBe('partial ');
  });

  it('models without an upstream route stay on the sandbox', async () => {
    const res = await post({ model: 'chat-2.5-pro', messages: [{ role: 'user', content: 'hello sandbox' }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.data.content).toMatch(/hello sandbox/);
  });
});
