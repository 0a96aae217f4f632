import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBodyProblem } from '../../../src/http/body-bounds.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { body } from '../../helpers/json.js';
import { countTasksByStatus } from '../../helpers/task-rows.js';

// A lone UTF-16 surrogate (`"\ud800"` in JSON) in any string value or key of any POST body is a 400
// in the family's error body naming the field (G110), never a 5xx, and stores nothing.
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const LONE = 'a\ud800b'; // JSON.stringify writes it as the escape "a\ud800b", as a client would send it
const RULE = /contains a lone UTF-16 surrogate \(\\ud800 at position 1\); text must be well-formed Unicode/;

const post = (url: string, payload: unknown) =>
  h.app.inject({
    method: 'POST',
    url,
    headers: { ...h.auth(), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });

const queued = async (): Promise<number> => (await countTasksByStatus(h.store.tasks)).queued;

describe('a lone surrogate in a chat message', () => {
  it.each([
    ['string content', 'messages[0].content', { messages: [{ role: 'user', content: LONE }] }],
    ['string content, streamed', 'messages[0].content', { stream: true, messages: [{ role: 'user', content: LONE }] }],
    [
      'a text part',
      'messages[1].content[1].text',
      {
        messages: [
          { role: 'system', content: 'ok' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'fine' },
              { type: 'text', text: LONE },
            ],
          },
        ],
      },
    ],
    ['a text part, streamed', 'messages[0].content[0].text', { stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: LONE }] }] }],
    ['the stop sequence', 'stop[0]', { stop: [LONE], messages: [{ role: 'user', content: 'hi' }] }],
  ])('%s: 400 in the chat body naming %s', async (_what, field, fields) => {
    const res = await post('/v1/chat/completions', { model: 'chat-2.5-flash', ...fields });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const b = body(res);
    expect(b).toMatchObject({ code: '400', data: null, success: false });
    expect(b.msg).toMatch(new RegExp(`^${field.replace(/[[\].]/g, '\\$&')} `));
    expect(b.msg).toMatch(RULE);
  });

  it('a well-formed surrogate pair (an emoji written as escapes) is accepted, streamed or not', async () => {
    for (const stream of [false, true]) {
      const res = await post('/v1/chat/completions', { model: 'chat-2.5-flash', stream, messages: [{ role: 'user', content: 'smile \ud83d\ude00' }] });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});

describe('a lone surrogate in a task body', () => {
  it.each([
    ['pic prompt', 'prompt', '/v1/pic/images', { model: 'pic', prompt: LONE }, 'standard'],
    ['motion content text', 'content[0].text', '/v1/motion/videos', { model: 'motion_2_0', content: [{ type: 'text', text: LONE }] }, 'standard'],
    [
      'a Model Center extra field, nested',
      'extra.deep[1]',
      '/v2/model-center/tasks',
      { model: 'sd_2.0_fast_discount', prompt: 'x', duration: 5, extra: { deep: ['fine', LONE] } },
      'standard',
    ],
    ['a videos prompt', 'prompt', '/v1/videos/videos', { model: 'videos', prompt: LONE, duration: 5 }, 'videos-create'],
    ['an ignored extra field of clip', 'note', '/clip/videos', { model: 'clip_3_1_fast', prompt: 'x', note: LONE }, 'standard'],
  ])('%s: 400 naming %s, nothing stored', async (_what, field, url, payload, style) => {
    const before = await queued();
    const res = await post(url, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(await queued()).toBe(before);
    const b = body(res);
    if (style === 'videos-create') {
      expect(b).toMatchObject({ code: '400', data: null });
      expect(b.msg).toMatch(RULE);
      expect(b.msg.startsWith(`${field} `)).toBe(true);
    } else {
      expect(b.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: field });
      expect(b.error.message).toMatch(RULE);
      expect(b.error.message.startsWith(`${field} `)).toBe(true);
    }
    // the same body without the surrogate is accepted: the refusal was about the surrogate alone
    const fixed = await post(url, JSON.parse(JSON.stringify(payload).replace('\\ud800', '')));
    expect(fixed.statusCode, fixed.body).toBe(200);
  });

  it('a key with a lone surrogate: 400 naming the key (escaped) and where it is', async () => {
    const top = await post('/v1/pic/images', { model: 'pic', prompt: 'x', '\udc00': 1 });
    expect(top.statusCode).toBe(400);
    expect(body(top).error).toMatchObject({ code: 'invalid_request', param: '\\udc00' });
    expect(body(top).error.message).toMatch(/^The key "\\udc00" of the body contains a lone UTF-16 surrogate \(\\udc00 at position 0\)/);

    const nested = await post('/v2/model-center/tasks', { model: 'sd_2.0_fast_discount', prompt: 'x', tools: [{ 'k\udbff': true }] });
    expect(nested.statusCode).toBe(400);
    expect(body(nested).error).toMatchObject({ code: 'invalid_request', param: 'tools[0].k\\udbff' });
    expect(body(nested).error.message).toMatch(/^The key "k\\udbff" in tools\[0\] contains a lone UTF-16 surrogate \(\\udbff at position 1\)/);
  });

  it('the motion cancel body too', async () => {
    const created = await post('/v1/motion/videos', { model: 'motion_2_0', content: [{ type: 'text', text: 'a fox' }] });
    const id = body(created).id as string;
    const res = await post(`/v1/motion/videos/${id}/cancel`, { reason: LONE });
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ code: 'invalid_request', param: 'reason' });
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
  });
});

describe('the walk', () => {
  it('finds the first lone surrogate in document order with its path; pairs and other text pass', () => {
    expect(findBodyProblem({ a: ['x', { b: 'ok \ud83d\ude00', c: '\udfff' }] }, 32)).toEqual({
      kind: 'lone-surrogate',
      path: ['a', 1, 'c'],
      inKey: false,
      text: '\udfff',
    });
    expect(findBodyProblem({ a: 'z\ud83d' }, 32)).toMatchObject({ path: ['a'], inKey: false }); // a high surrogate at the end
    expect(findBodyProblem({ a: '\ude00\ud83d' }, 32)).toMatchObject({ path: ['a'] }); // a pair in the wrong order
    expect(findBodyProblem({ a: ['é', '你好', '\ud83d\ude00', 1, null, true], b: { c: '' } }, 32)).toBeUndefined();
  });
});
