import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { body } from './helpers/json.js';

// Error messages that name what the client sent, also where JSON.parse or Fastify's JSON parser
// changed it (docs/API.md G4, G5, G115).
let h: Harness;
beforeAll(async () => { h = await createHarness({ workers: false, reviewMedia: false }); });
afterAll(async () => { await h.close(); });

const post = (url: string, payload: string) => h.app.inject({ method: 'POST', url, headers: { ...h.auth(), 'content-type': 'application/json' }, payload });

describe('numbers beyond the double range (JSON.parse reads them as Infinity)', () => {
  it.each([
    ['/v1/chat/completions', '{"model":"chat-2.5-flash","max_completion_tokens":1e309,"messages":[{"role":"user","content":"hi"}]}',
      'max_completion_tokens must be an integer (got Infinity: a number beyond ±1.8e308, too large to represent)'],
    ['/v1/chat/completions', '{"model":"chat-2.5-flash","temperature":-1e400,"messages":[{"role":"user","content":"hi"}]}',
      'temperature must be a number (got -Infinity: a number beyond ±1.8e308, too large to represent)'],
    ['/v2/model-center/tasks', '{"model":"sd_2.0_fast_discount","prompt":"x","seed":1e309}',
      'seed must be an integer (got Infinity: a number beyond ±1.8e308, too large to represent)'],
  ])('%s: %s', async (url, payload, message) => {
    const res = await post(url, payload);
    expect(res.statusCode).toBe(400);
    const b = body(res);
    expect(b.msg ?? b.error.message).toBe(message);
  });
});
