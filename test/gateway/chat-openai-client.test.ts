import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxChatProvider } from '../../src/chat/sandbox.js';
import { scriptedProvider } from '../helpers/chat.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';

/** The official client against the gateway: streaming reads as OpenAI chunks, errors map to its classes. */
const slow = scriptedProvider(
  'slow',
  Array.from({ length: 200 }, (_, i) => ({ delayMs: 20, delta: `t${i} ` })),
);

let h: Harness;
let client: OpenAI;
let url: string;

beforeAll(async () => {
  h = await createHarness({
    workers: false,
    env: { MEDIAGATE_CHAT_HEARTBEAT_MS: '30' },
    chatProviders: [createSandboxChatProvider({ tokensPerSecond: 0 }), slow],
    chatRoutes: { 'chat-3-pro-preview': 'slow' },
  });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  client = new OpenAI({ apiKey: h.key, baseURL: `${url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await h.close();
});

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  let role: string | undefined;
  const ids = new Set<string>();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    const choice = chunk.choices[0];
    if (choice?.delta.role) role = choice.delta.role;
    if (choice?.delta.content) text += choice.delta.content;
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, finish, usage, role, ids };
}

describe('the official openai client (6.x)', () => {
  it('streams: text assembled, role, finish_reason, usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'chat-2.5-flash',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be helpful.' },
        { role: 'user', content: 'Name three colours' },
      ],
    });
    const got = await collect(stream);
    expect(got.role).toBe('assistant');
    expect(got.text).toContain('You asked: "Name three colours"');
    expect(got.text).toContain('2 messages (1 system, 1 user, 0 assistant)');
    expect(got.finish).toBe('stop');
    expect(got.usage).toBeDefined();
    expect(got.usage!.total_tokens).toBe(got.usage!.prompt_tokens + got.usage!.completion_tokens);
    expect(got.ids.size).toBe(1);
    // the same reply as the (non-OpenAI) envelope of a non-streaming call
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat-2.5-flash',
        messages: [
          { role: 'system', content: 'Be helpful.' },
          { role: 'user', content: 'Name three colours' },
        ],
      }),
    });
    const envelope = (await res.json()) as { data: { content: string; usage: unknown } };
    expect(got.text).toBe(envelope.data.content);
    expect(got.usage).toEqual(envelope.data.usage);
  });

  it('streams multimodal content parts', async () => {
    const got = await collect(
      await client.chat.completions.create({
        model: 'chat-3.1-pro-preview',
        stream: true,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/p/photo.jpg' } },
            ],
          },
        ],
      }),
    );
    expect(got.text).toContain('1 image (photo.jpg)');
  });

  it('max_completion_tokens: finish_reason "length" and that many completion tokens', async () => {
    const got = await collect(
      await client.chat.completions.create({
        model: 'chat-2.5-pro',
        stream: true,
        max_completion_tokens: 4,
        messages: [{ role: 'user', content: 'Tell me a long story' }],
      }),
    );
    expect(got.finish).toBe('length');
    expect(got.usage!.completion_tokens).toBe(4);
  });

  it('stop sequences: the text ends before the first occurrence', async () => {
    const got = await collect(
      await client.chat.completions.create({
        model: 'chat-2.5-pro',
        stream: true,
        stop: ['conversation', 'sandbox'],
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(got.text).toBe('You asked: "Hi". This ');
    expect(got.finish).toBe('stop');
  });

  it('reads through heartbeat comments of a slow provider', async () => {
    const stream = await client.chat.completions.create({ model: 'chat-3-pro-preview', stream: true, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    let n = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (++n === 4) break; // role chunk + 3 deltas; breaking aborts the request
    }
    expect(text).toBe('t0 t1 t2 ');
    const signal = slow.signals.at(-1)!;
    await waitFor(() => (signal.aborted ? true : undefined), 3000, 'the provider to be aborted after the client stopped');
  });

  it('a 400 is a BadRequestError', async () => {
    const err = await client.chat.completions
      .create({ model: 'chat-2.5-pro', temperature: 3, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  });

  it('an unknown model is a BadRequestError, streaming or not', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('a bad key is an AuthenticationError', async () => {
    const bad = new OpenAI({ apiKey: 'mg_not-a-key', baseURL: `${url}/v1`, maxRetries: 0 });
    const err = await bad.chat.completions.create({ model: 'chat-2.5-pro', stream: true, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
  });

  it('a provider failure before the first byte is an InternalServerError (502)', async () => {
    const err = await client.chat.completions
      .create({ model: 'chat-2.5-pro', stream: true, messages: [{ role: 'user', content: '[fail]' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  });

  it('a failure mid-stream surfaces as an APIError while iterating, not a silent cut', async () => {
    const stream = await client.chat.completions.create({ model: 'chat-2.5-pro', stream: true, messages: [{ role: 'user', content: '[fail-midway] go' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text.length).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('[fail-midway]');
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_error');
    expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('upstream_error');
  });
});
