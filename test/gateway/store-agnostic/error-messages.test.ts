import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { body } from '../../helpers/json.js';
import { countTasksByStatus } from '../../helpers/task-rows.js';

// Error messages that name what the client sent, also where JSON.parse or Fastify's JSON parser
// changed it (G4, G5, G115).
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const post = (url: string, payload: string) => h.app.inject({ method: 'POST', url, headers: { ...h.auth(), 'content-type': 'application/json' }, payload });

describe('numbers beyond the double range (JSON.parse reads them as Infinity)', () => {
  it.each([
    [
      '/v1/chat/completions',
      '{"model":"chat-2.5-flash","max_completion_tokens":1e309,"messages":[{"role":"user","content":"hi"}]}',
      'max_completion_tokens must be an integer (got Infinity: a number beyond ±1.8e308, too large to represent)',
    ],
    [
      '/v1/chat/completions',
      '{"model":"chat-2.5-flash","temperature":-1e400,"messages":[{"role":"user","content":"hi"}]}',
      'temperature must be a number (got -Infinity: a number beyond ±1.8e308, too large to represent)',
    ],
    [
      '/v2/model-center/tasks',
      '{"model":"sd_2.0_fast_discount","prompt":"x","seed":1e309}',
      'seed must be an integer (got Infinity: a number beyond ±1.8e308, too large to represent)',
    ],
  ])('%s: %s', async (url, payload, message) => {
    const res = await post(url, payload);
    expect(res.statusCode).toBe(400);
    const b = body(res);
    expect(b.msg ?? b.error.message).toBe(message);
  });
});

describe('prototype poisoning keys are refused with a message saying so', () => {
  it.each([
    [
      'a top-level __proto__',
      '/v1/pic/images',
      '{"model":"pic","prompt":"x","__proto__":{"admin":true}}',
      'The body contains a "__proto__" key (at the top level), which is not accepted',
    ],
    [
      'a nested __proto__, written with escapes',
      '/v2/model-center/tasks',
      '{"model":"sd_2.0_fast_discount","prompt":"x","tools":[{"a":1},{"\\u005f_proto__":{}}]}',
      'The body contains a "__proto__" key (in tools[1]), which is not accepted',
    ],
    [
      'constructor.prototype',
      '/v1/motion/videos',
      '{"model":"motion_2_0","content":[{"type":"text","text":"x","constructor":{"prototype":{"x":1}}}]}',
      'The body contains a "constructor" key holding an object with a "prototype" key (in content[0]), which is not accepted',
    ],
  ])('%s: 400 invalid_json', async (_what, url, payload, message) => {
    const before = (await countTasksByStatus(h.store.tasks)).queued;
    const res = await post(url, payload);
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ code: 'invalid_json', param: null });
    expect(body(res).error.message.startsWith(message)).toBe(true);
    expect((await countTasksByStatus(h.store.tasks)).queued).toBe(before);
  });

  it('in the chat body too, and the words "proto" or "constructor" elsewhere are fine', async () => {
    const res = await post('/v1/chat/completions', '{"model":"chat-2.5-flash","messages":[{"role":"user","content":"hi"}],"__proto__":null}');
    expect(res.statusCode).toBe(400);
    expect(body(res)).toMatchObject({
      code: '400',
      success: false,
      msg: expect.stringMatching(/^The body contains a "__proto__" key \(at the top level\), which is not accepted/),
    });
    const ok = await post(
      '/v1/pic/images',
      '{"model":"pic","prompt":"__proto__ and constructor.prototype, \\u00e9","constructor":"x","x":{"constructor":{"proto":1}}}',
    );
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('malformed JSON says where', async () => {
    const res = await post('/v1/pic/images', '{"model":"pic",}');
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ code: 'invalid_json', message: expect.stringMatching(/^The body is not valid JSON: .*position 15/) });
  });
});
