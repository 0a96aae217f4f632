import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { sseData } from '../helpers/chat.js';

/** The chat models (docs/reference/api/chat.md#request), written out: a wrong list in src must fail here. */
const CHAT_MODELS = ['chat-3-flash-preview', 'chat-2.5-flash-lite', 'chat-2.5-flash', 'chat-3.1-pro-preview', 'chat-3-pro-preview', 'chat-2.5-pro'];

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

const chat = (payload: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { ...h.auth(), 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

const user = (content: unknown) => ({ role: 'user', content });
const base = { model: 'chat-2.5-flash', messages: [user('Hello there')] };

describe('chat: every model answers with the success envelope (D21)', () => {
  it.each(CHAT_MODELS)('%s', async (model) => {
    const res = await chat({ model, messages: [user('What is 2+2?')] });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const b = body(res);
    expect(Object.keys(b).sort()).toEqual(['code', 'data', 'msg', 'success']);
    expect(b).toMatchObject({ code: '200', msg: '成功', success: true });
    expect(Object.keys(b.data).sort()).toEqual(['content', 'finish_reason', 'id', 'model', 'usage']);
    expect(b.data.model).toBe(model);
    expect(b.data.id).toMatch(/^chatcmpl-[A-Za-z0-9_-]{22}$/);
    expect(b.data.finish_reason).toBe('stop');
    expect(b.data.content).toContain('You asked: "What is 2+2?"');
    const u = b.data.usage;
    expect(u.completion_tokens).toBe(encode(b.data.content).length);
    expect(u.prompt_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
  });
});

describe('chat: accepted requests (every optional field at its edges)', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    [
      'system, user and assistant roles',
      { messages: [{ role: 'system', content: 'Be brief.' }, user('Hi'), { role: 'assistant', content: 'Hello!' }, user('Again')] },
    ],
    [
      'content as text parts',
      {
        messages: [
          user([
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ]),
        ],
      },
    ],
    [
      'content with image_url parts (http and https)',
      {
        messages: [
          user([
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'image_url', image_url: { url: 'http://example.com/b.jpg', detail: 'low' } },
          ]),
        ],
      },
    ],
    ['a video as image_url', { messages: [user([{ type: 'image_url', image_url: { url: 'https://example.com/v/clip.mp4' } }])] }],
    ['empty string content', { messages: [user('')] }],
    ['empty content array', { messages: [user([])] }],
    ['only an assistant message', { messages: [{ role: 'assistant', content: 'hm' }] }],
    ['temperature 0', { temperature: 0 }],
    ['temperature 2', { temperature: 2 }],
    ['temperature 0.7', { temperature: 0.7 }],
    ['top_p 0', { top_p: 0 }],
    ['top_p 1', { top_p: 1 }],
    ['temperature and top_p together (D10)', { temperature: 1, top_p: 0.5 }],
    ['stream false', { stream: false }],
    ['max_completion_tokens 1', { max_completion_tokens: 1 }],
    ['max_completion_tokens large', { max_completion_tokens: 100000 }],
    ['stop as string', { stop: 'xyz' }],
    ['stop as 4 strings', { stop: ['a1', 'b2', 'c3', 'd4'] }],
    ['stop empty array', { stop: [] }],
    ['stop null', { stop: null }],
    ['presence_penalty -2', { presence_penalty: -2 }],
    ['presence_penalty 2', { presence_penalty: 2 }],
    ['frequency_penalty -2', { frequency_penalty: -2 }],
    ['frequency_penalty 2', { frequency_penalty: 2 }],
    ['frequency_penalty 0', { frequency_penalty: 0 }],
    ['unknown extra fields (D11)', { n: 2, user: 'u1', stream_options: { include_usage: true }, tools: [] }],
    ['extra fields in a message', { messages: [{ role: 'user', content: 'x', name: 'bob' }] }],
  ];
  it.each(cases)('%s', async (_name, extra) => {
    const res = await chat({ ...base, ...extra });
    expect(res.statusCode, res.body).toBe(200);
    expect(body(res).success).toBe(true);
  });
});

describe('chat: every broken rule is a 400 with the chat error body naming the field', () => {
  const five = ['a', 'b', 'c', 'd', 'e'];
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing model', { messages: [user('x')] }, /^model is required$/],
    [
      'unknown model',
      { ...base, model: 'gpt-4o' },
      /^model must be one of: chat-3-flash-preview, chat-2\.5-flash-lite, chat-2\.5-flash, chat-3\.1-pro-preview, chat-3-pro-preview, chat-2\.5-pro \(got "gpt-4o"\)$/,
    ],
    ['model wrong type', { ...base, model: 3 }, /^model must be a string/],
    ['missing messages', { model: 'chat-2.5-flash' }, /^messages is required$/],
    ['empty messages', { ...base, messages: [] }, /^messages needs at least 1 items \(got 0\)$/],
    ['messages not an array', { ...base, messages: 'hi' }, /^messages must be an array/],
    ['message not an object', { ...base, messages: ['hi'] }, /^messages\[0\] must be an object/],
    ['missing role', { ...base, messages: [{ content: 'x' }] }, /^messages\[0\]\.role is required$/],
    [
      'unknown role',
      { ...base, messages: [user('a'), { role: 'tool', content: 'x' }] },
      /^messages\[1\]\.role must be one of: system, user, assistant \(got "tool"\)$/,
    ],
    ['missing content', { ...base, messages: [{ role: 'user' }] }, /^messages\[0\]\.content is required$/],
    ['content a number', { ...base, messages: [user(5)] }, /^messages\[0\]\.content must be a string or an array \(got 5\)$/],
    ['content null', { ...base, messages: [user(null)] }, /^messages\[0\]\.content must be a string or an array \(got null\)$/],
    ['content part not an object', { ...base, messages: [user(['hi'])] }, /^messages\[0\]\.content\[0\] must be an object/],
    ['content part missing type', { ...base, messages: [user([{ text: 'x' }])] }, /^messages\[0\]\.content\[0\]\.type is required$/],
    [
      'content part video_url type',
      {
        ...base,
        messages: [
          user('a'),
          user([
            { type: 'text', text: 'a' },
            { type: 'video_url', video_url: { url: 'https://a/b.mp4' } },
          ]),
        ],
      },
      /^messages\[1\]\.content\[1\]\.type must be one of: text, image_url \(got "video_url"\)$/,
    ],
    ['text part without text', { ...base, messages: [user([{ type: 'text' }])] }, /^messages\[0\]\.content\[0\]\.text is required$/],
    ['text part text not a string', { ...base, messages: [user([{ type: 'text', text: 1 }])] }, /^messages\[0\]\.content\[0\]\.text must be a string/],
    ['image part without image_url', { ...base, messages: [user([{ type: 'image_url' }])] }, /^messages\[0\]\.content\[0\]\.image_url is required$/],
    [
      'image_url as a bare string',
      { ...base, messages: [user([{ type: 'image_url', image_url: 'https://a/b.png' }])] },
      /^messages\[0\]\.content\[0\]\.image_url must be an object/,
    ],
    [
      'image_url without url',
      { ...base, messages: [user([{ type: 'image_url', image_url: {} }])] },
      /^messages\[0\]\.content\[0\]\.image_url\.url is required$/,
    ],
    [
      'image_url not http(s)',
      { ...base, messages: [user([{ type: 'image_url', image_url: { url: 'ftp://a/b.png' } }])] },
      /^messages\[0\]\.content\[0\]\.image_url\.url must be an absolute http\(s\) URL/,
    ],
    [
      'image_url a data URL',
      { ...base, messages: [user([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }])] },
      /^messages\[0\]\.content\[0\]\.image_url\.url must be an absolute http\(s\) URL/,
    ],
    ['temperature below 0', { ...base, temperature: -0.1 }, /^temperature must be >= 0 \(got -0\.1\)$/],
    ['temperature above 2', { ...base, temperature: 2.01 }, /^temperature must be <= 2 \(got 2\.01\)$/],
    ['temperature a string', { ...base, temperature: '1' }, /^temperature must be a number/],
    ['top_p below 0', { ...base, top_p: -1 }, /^top_p must be >= 0/],
    ['top_p above 1', { ...base, top_p: 1.5 }, /^top_p must be <= 1 \(got 1\.5\)$/],
    ['stream a string', { ...base, stream: 'true' }, /^stream must be true or false/],
    ['max_completion_tokens 0', { ...base, max_completion_tokens: 0 }, /^max_completion_tokens must be >= 1 \(got 0\)$/],
    ['max_completion_tokens negative', { ...base, max_completion_tokens: -5 }, /^max_completion_tokens must be >= 1/],
    ['max_completion_tokens fractional', { ...base, max_completion_tokens: 1.5 }, /^max_completion_tokens must be an integer/],
    ['max_completion_tokens a string', { ...base, max_completion_tokens: '10' }, /^max_completion_tokens must be an integer/],
    ['stop with 5 strings', { ...base, stop: five }, /^stop allows at most 4 items \(got 5\)$/],
    ['stop a number', { ...base, stop: 5 }, /^stop must be a string or an array or null \(got 5\)$/],
    ['stop item not a string', { ...base, stop: ['a', 2] }, /^stop\[1\] must be a string/],
    ['stop empty string', { ...base, stop: '' }, /^stop must not be empty$/],
    ['stop item empty', { ...base, stop: ['a', ''] }, /^stop\[1\] must not be empty$/],
    ['presence_penalty below -2', { ...base, presence_penalty: -2.5 }, /^presence_penalty must be >= -2/],
    ['presence_penalty above 2', { ...base, presence_penalty: 3 }, /^presence_penalty must be <= 2 \(got 3\)$/],
    ['frequency_penalty below -2', { ...base, frequency_penalty: -3 }, /^frequency_penalty must be >= -2/],
    ['frequency_penalty above 2', { ...base, frequency_penalty: 2.1 }, /^frequency_penalty must be <= 2/],
    ['frequency_penalty a string', { ...base, frequency_penalty: 'high' }, /^frequency_penalty must be a number/],
    ['body an array', [], /must be a JSON object/],
    ['body not JSON', '{"model":', /not valid JSON/],
  ];
  it.each(cases)('%s', async (_name, payload, message) => {
    const res = await chat(payload);
    expect(res.statusCode, res.body).toBe(400);
    const b = body(res);
    expect(b).toEqual({ code: '400', msg: expect.any(String), data: null, success: false });
    expect(b.msg).toMatch(message);
  });

  it('a body that is not JSON by content type is a 400 with the chat body', async () => {
    const res = await chat('hello', { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(400);
    expect(body(res)).toMatchObject({ code: '400', data: null, success: false });
  });

  it('a rejected request records no usage', async () => {
    const before = await h.store.usage.chatUsageByKey(await keyId(h.key));
    await chat({ ...base, temperature: 9 });
    expect(await h.store.usage.chatUsageByKey(await keyId(h.key))).toEqual(before);
  });
});

describe('chat: auth errors have the chat body', () => {
  it('missing key: 401', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(base),
    });
    expect(res.statusCode).toBe(401);
    expect(body(res)).toEqual({ code: '401', msg: expect.stringMatching(/Authorization/), data: null, success: false });
  });
  it('unknown key: 401', async () => {
    const res = await chat(base, { authorization: 'Bearer mg_nope' });
    expect(res.statusCode).toBe(401);
    expect(body(res)).toEqual({ code: '401', msg: expect.stringMatching(/Invalid API key/), data: null, success: false });
  });
});

describe('chat: the sandbox reply, max tokens and stop sequences', () => {
  it('says what the last user message asked, counts messages and names images and videos', async () => {
    const res = await chat({
      model: 'chat-3.1-pro-preview',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        user('first question'),
        { role: 'assistant', content: 'first answer' },
        user([
          { type: 'text', text: 'What happens in these?' },
          { type: 'image_url', image_url: { url: 'https://cdn.example.com/img/cat.png?sig=1' } },
          { type: 'image_url', image_url: { url: 'https://cdn.example.com/v/walk.MOV' } },
          { type: 'image_url', image_url: { url: 'https://cdn.example.com/dog.webp' } },
        ]),
      ],
    });
    const content = body(res).data.content as string;
    expect(content).toContain('You asked: "What happens in these?"');
    expect(content).toContain('2 images (cat.png, dog.webp)');
    expect(content).toContain('1 video (walk.MOV)');
    expect(content).toContain('4 messages (1 system, 2 user, 1 assistant)');
    expect(content).toContain('chat-3.1-pro-preview');
  });

  it('is deterministic', async () => {
    const a = body(await chat(base)).data;
    const b = body(await chat(base)).data;
    expect(a.content).toBe(b.content);
    expect(a.usage).toEqual(b.usage);
    expect(a.id).not.toBe(b.id);
  });

  it('counts prompt tokens as 3 per message + role + content, 85 per image, +3 priming (G37)', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      user([
        { type: 'text', text: 'Describe it' },
        { type: 'image_url', image_url: { url: 'https://a.example/x.png' } },
      ]),
    ];
    const want = 3 + (3 + encode('system').length + encode('Be brief.').length) + (3 + encode('user').length + encode('Describe it').length + 85);
    expect(body(await chat({ ...base, messages })).data.usage.prompt_tokens).toBe(want);
  });

  it('max_completion_tokens cuts the reply with finish_reason "length"', async () => {
    const full = body(await chat(base)).data;
    const cut = body(await chat({ ...base, max_completion_tokens: 5 })).data;
    expect(cut.finish_reason).toBe('length');
    expect(cut.usage.completion_tokens).toBe(5);
    expect(encode(cut.content).length).toBe(5);
    expect(full.content.startsWith(cut.content)).toBe(true);
    expect(cut.usage.prompt_tokens).toBe(full.usage.prompt_tokens);
  });

  it('a budget at least the reply length finishes with "stop"', async () => {
    const full = body(await chat(base)).data;
    const same = body(await chat({ ...base, max_completion_tokens: full.usage.completion_tokens })).data;
    expect(same).toMatchObject({ finish_reason: 'stop', content: full.content });
  });

  it('a stop sequence cuts the reply before its first occurrence, finish_reason "stop"', async () => {
    const res = body(await chat({ ...base, stop: 'conversation' })).data;
    expect(res.finish_reason).toBe('stop');
    expect(res.content).toBe('You asked: "Hello there". This ');
    expect(res.usage.completion_tokens).toBe(encode(res.content).length);
  });

  it('the earliest of several stop sequences wins; a sequence that never occurs changes nothing', async () => {
    const res = body(await chat({ ...base, stop: ['sandbox', 'message', 'zzz-not-there'] })).data;
    expect(res.content).toBe('You asked: "Hello there". This conversation has 1 ');
    const none = body(await chat({ ...base, stop: ['zzz-not-there'] })).data;
    expect(none.content).toBe(body(await chat(base)).data.content);
  });

  it('stop before the token budget: "stop"; budget before the stop: "length"', async () => {
    expect(body(await chat({ ...base, stop: 'asked', max_completion_tokens: 50 })).data).toMatchObject({ content: 'You ', finish_reason: 'stop' });
    expect(body(await chat({ ...base, stop: 'sandbox', max_completion_tokens: 2 })).data).toMatchObject({ content: 'You asked', finish_reason: 'length' });
  });

  it('[fail] in the last user message is a 502 with the chat body, no usage', async () => {
    const id = await keyId(h.key);
    const before = JSON.stringify(await h.store.usage.chatUsageByKey(id));
    const res = await chat({ ...base, messages: [user('please [fail] now')] });
    expect(res.statusCode).toBe(502);
    expect(body(res)).toEqual({ code: '502', msg: expect.stringContaining('[fail]'), data: null, success: false });
    expect(JSON.stringify(await h.store.usage.chatUsageByKey(id))).toBe(before);
  });

  it('[fail] streamed: still a JSON 502, since it fails before the first byte', async () => {
    const res = await chat({ ...base, stream: true, messages: [user('[fail]')] });
    expect(res.statusCode).toBe(502);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(body(res)).toMatchObject({ code: '502', success: false });
  });

  it('special-token text in a message is counted as plain text', async () => {
    const res = await chat({ ...base, messages: [user('what is <|endoftext|>?')] });
    expect(res.statusCode).toBe(200);
    expect(body(res).data.content).toContain('<|endoftext|>');
  });
});

describe('chat: streaming through inject (full body)', () => {
  it('chunks assemble to the same content as the envelope; finish then usage then [DONE]', async () => {
    const whole = body(await chat(base)).data;
    const res = await chat({ ...base, stream: true });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toMatch(/no-cache/);
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers['x-request-id']).toBeTruthy();
    const events = sseData(res.body);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Array<Record<string, any>>;
    for (const c of chunks) {
      expect(c).toMatchObject({ object: 'chat.completion.chunk', model: base.model });
      expect(c.id).toBe(chunks[0]!.id);
      expect(c.id).toMatch(/^chatcmpl-/);
      expect(Number.isInteger(c.created)).toBe(true);
    }
    expect(chunks[0]!.choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(whole.usage);
    const finishChunk = chunks.at(-2)!;
    expect(finishChunk.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    const deltas = chunks.slice(1, -2);
    expect(deltas.length).toBeGreaterThan(5);
    for (const d of deltas) expect(d.choices[0].finish_reason).toBeNull();
    expect(deltas.map((d) => d.choices[0].delta.content).join('')).toBe(whole.content);
  });

  it('max_completion_tokens while streaming: finish_reason "length" and that many tokens', async () => {
    const events = sseData((await chat({ ...base, stream: true, max_completion_tokens: 3 })).body).filter((e) => e !== '[DONE]') as Array<Record<string, any>>;
    const usage = events.find((e) => e.usage)!.usage;
    expect(usage.completion_tokens).toBe(3);
    expect(events.find((e) => e.choices?.[0]?.finish_reason)!.choices[0].finish_reason).toBe('length');
  });

  it('[fail-midway] sends part of the reply, then an error event and no [DONE]', async () => {
    const res = await chat({ ...base, stream: true, messages: [user('[fail-midway] tell me a story')] });
    expect(res.statusCode).toBe(200);
    const events = sseData(res.body);
    expect(events).not.toContain('[DONE]');
    const last = events.at(-1) as Record<string, any>;
    expect(last).toEqual({ error: { message: expect.stringContaining('[fail-midway]'), type: 'upstream_error', param: null, code: 'upstream_error' } });
    const text = events
      .slice(0, -1)
      .map((e) => (e as Record<string, any>).choices[0].delta.content ?? '')
      .join('');
    expect(text.length).toBeGreaterThan(10);
  });

  it('[fail-midway] without streaming is a 502', async () => {
    const res = await chat({ ...base, messages: [user('[fail-midway] tell me a story')] });
    expect(res.statusCode).toBe(502);
  });
});

describe('chat: usage is recorded per key', () => {
  it('one row per completion, streamed or not, with the reported tokens, for the calling key only', async () => {
    const other = await keyId(h.otherKey);
    const before = await h.store.usage.chatUsageByKey(other);
    expect(before).toEqual([]);
    const a = body(await chat({ ...base, model: 'chat-2.5-pro' }, h.auth(h.otherKey))).data;
    const streamed = sseData((await chat({ ...base, model: 'chat-2.5-pro', stream: true, max_completion_tokens: 4 }, h.auth(h.otherKey))).body);
    const su = (streamed.find((e) => e !== '[DONE]' && e.usage) as Record<string, any>).usage;
    await chat({ ...base, model: 'chat-2.5-flash-lite' }, h.auth(h.otherKey));
    const rows = await h.store.usage.chatUsageByKey(other);
    const pro = rows.find((r) => r.model === 'chat-2.5-pro')!;
    expect(pro).toEqual({
      model: 'chat-2.5-pro',
      requests: 2,
      promptTokens: a.usage.prompt_tokens + su.prompt_tokens,
      completionTokens: a.usage.completion_tokens + 4,
    });
    expect(rows.find((r) => r.model === 'chat-2.5-flash-lite')!.requests).toBe(1);
  });
});

async function keyId(secret: string): Promise<string> {
  const { hashApiKey } = await import('../../src/auth/keys.js');
  return (await h.store.keys.findActiveByHash(hashApiKey(secret)))!.id;
}
