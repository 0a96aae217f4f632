import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { createHarness, type Harness } from '../helpers/harness.js';

// Per-key rate limits (G76-G77): small limits so the test is quick.
let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    workers: false,
    reviewMedia: false,
    env: { MEDIAGATE_RATE_LIMIT: 'on', MEDIAGATE_RATE_LIMIT_SUBMITS: '3', MEDIAGATE_RATE_LIMIT_QUERIES: '5' },
  });
});
afterAll(async () => {
  await h.close();
});

// An injected clock: the limiters' memory store reads Date.now() for a budget's window and drops
// the window's count with a setTimeout at its end. With Date and setTimeout faked, every request
// of a burst happens at the same instant however slow the machine is, and a budget refills only
// when the test moves the clock (vi.advanceTimersByTime). Nothing on the inject path of these
// requests waits on a timer (the submit batch commits on setImmediate, which stays real).
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: new Date('2030-01-01T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (key: string, url = '/v1/pic/images', payload: Record<string, unknown> = { model: 'pic', prompt: 'x' }) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });
const query = (key: string, id: string) => h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: { authorization: `Bearer ${key}` } });

describe('rate limits per API key', () => {
  it('submits: the rate plus a burst of as many again, then 429 with Retry-After and the family body', async () => {
    const key = (await createApiKey(h.store.keys, 'submitter')).secret;
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) codes.push((await submit(key)).statusCode);
    expect(codes.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(codes.slice(6)).toEqual([429, 429]);
    const limited = await submit(key);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json().error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
    const videos = await submit(key, '/v1/videos/videos', { model: 'videos', prompt: 'x', duration: 5 });
    expect(videos.statusCode).toBe(429);
    expect(videos.json()).toMatchObject({ code: '429', data: null });
    const chat = await submit(key, '/v1/chat/completions', { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.json()).toMatchObject({ code: '429', success: false });
  });

  it('the budget refills with time: the rate after its 1 s window, the burst after its 2 s', async () => {
    const key = (await createApiKey(h.store.keys, 'refill')).secret;
    const burst = async (n: number) => {
      const codes: number[] = [];
      for (let i = 0; i < n; i++) codes.push((await submit(key)).statusCode);
      return codes;
    };
    expect(await burst(7)).toEqual([200, 200, 200, 200, 200, 200, 429]);
    vi.advanceTimersByTime(500); // not yet: half way through the 1 s window
    expect(await burst(1)).toEqual([429]);
    vi.advanceTimersByTime(500); // the 1 s window is over: the rate again, the burst still spent
    expect(await burst(4)).toEqual([200, 200, 200, 429]);
    vi.advanceTimersByTime(1000); // the 2 s burst window is over too (and a second 1 s one)
    expect(await burst(7)).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  it('queries have their own budget; one key flooding leaves another key untouched', async () => {
    const flood = (await createApiKey(h.store.keys, 'flood')).secret;
    const calm = (await createApiKey(h.store.keys, 'calm')).secret;
    const id = (await submit(flood)).json().id as string;
    const calmId = (await submit(calm)).json().id as string;
    const codes: number[] = [];
    for (let i = 0; i < 14; i++) codes.push((await query(flood, id)).statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(10);
    expect(codes.slice(10)).toEqual([429, 429, 429, 429]);
    expect((await query(calm, calmId)).statusCode).toBe(200);
    expect((await submit(calm)).statusCode).toBe(200);
  });

  it('a key of its own limits (keys limit) gets them', async () => {
    const { secret, record } = await createApiKey(h.store.keys, 'vip');
    expect(await h.store.keys.setRateLimits(record.id, { submitRate: 10, queryRate: null })).toBe(true);
    const codes: number[] = [];
    for (let i = 0; i < 21; i++) codes.push((await submit(secret)).statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(20);
    expect(codes[20]).toBe(429);
  });

  it('a bad key is a 401 before any budget is spent', async () => {
    const res = await submit('mg_not-a-key');
    expect(res.statusCode).toBe(401);
  });
});
