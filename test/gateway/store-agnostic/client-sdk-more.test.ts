import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminClient,
  InsufficientCreditsError,
  Mediagate,
  PayloadTooLargeError,
  RateLimitError,
  sseData,
  type AnyTask,
  type FetchLike,
} from '../../../packages/client/src/index.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';

// The SDK's task list, its retries on 429, and its SSE reader (G231-G233). The gateways whose tasks
// only need to exist (addresses, lists, errors) run no worker: nothing renders media nobody looks at
// (G276).
let g: ListeningGateway;
beforeAll(async () => {
  g = await listeningGateway({ env: { MEDIAGATE_RATE_LIMIT: 'on', MEDIAGATE_RATE_LIMIT_QUERIES: '1' } });
});
afterAll(async () => {
  await g?.close();
});

describe('rate limits', () => {
  it('get answers 429 as a RateLimitError with Retry-After; waitFor waits it out and still gives the result', async () => {
    const statuses: number[] = [];
    const recording: FetchLike = async (url, init) => {
      const r = await fetch(url, init);
      statuses.push(r.status);
      return r;
    };
    const client = new Mediagate({ baseUrl: g.origin, apiKey: g.key, fetch: recording });
    const created = await client.pic.create({ model: 'pic', prompt: 'slowly' });
    // a query budget of 1/s with bursts of 2: the third query at once is over it
    const errors = await Promise.all(
      [0, 1, 2, 3].map(() =>
        client.pic.get(created.id).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    const limited = errors.find((e) => e instanceof RateLimitError) as RateLimitError | undefined;
    expect(limited?.status).toBe(429);
    expect(limited?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    statuses.length = 0;
    const done = await client.pic.waitFor(created.id, { pollIntervalMs: 1000 });
    expect(done.status).toBe('completed');
    expect(statuses).toContain(429); // the budget was spent above: waitFor's first query is refused, then retried
    expect(statuses.at(-1)).toBe(200);
  });
});

describe('more typed errors', () => {
  it('402 InsufficientCreditsError and 413 PayloadTooLargeError, each with the standard body', async () => {
    const h = await listeningGateway({ workers: false, env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_STARTING_CREDITS: '0', MEDIAGATE_BODY_LIMIT: '10000' } });
    try {
      const client = new Mediagate({ baseUrl: h.origin, apiKey: h.key });
      const poor = await client.pic.create({ model: 'pic', prompt: 'x' }).catch((e: unknown) => e);
      expect(poor).toBeInstanceOf(InsufficientCreditsError);
      expect((poor as InsufficientCreditsError).code).toBe('insufficient_credits');
      const big = await client.pic.create({ model: 'pic', prompt: 'x'.repeat(20_000) }).catch((e: unknown) => e);
      expect(big).toBeInstanceOf(PayloadTooLargeError);
      expect((big as PayloadTooLargeError).body).toMatchObject({ error: { code: 'body_too_large' } });
    } finally {
      await h.close();
    }
  });
});

describe('address prefixes (D1)', () => {
  it('motion goes to powerBaseUrl, clip and reel Form A to apiBaseUrl, Form B to baseUrl', async () => {
    const h = await listeningGateway({ workers: false, env: { MEDIAGATE_POWER_PREFIX: '/power', MEDIAGATE_API_PREFIX: '/api' } });
    try {
      const asked: string[] = [];
      const recording: FetchLike = (url, init) => {
        asked.push(`${init.method} ${url.slice(h.origin.length)}`);
        return fetch(url, init);
      };
      const client = new Mediagate({ baseUrl: h.origin, apiKey: h.key, powerBaseUrl: `${h.origin}/power`, apiBaseUrl: `${h.origin}/api/`, fetch: recording });
      const motion = await client.motion.create({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'x' }], duration: 4 });
      const clipA = await client.clip.create({ prompt: 'x' });
      const clipB = await client.clip.create({ model: 'clip_3_1_fast', prompt: 'x' });
      const reelA = await client.reel.create({ model: 'reel-2', prompt: 'x', duration: 10 });
      const reelB = await client.reel.create({ model: 'reelOa2Plus', prompt: 'x', duration: 4 });
      for (const [resource, id] of [
        [client.motion, motion.id],
        [client.clip, clipA.id],
        [client.clip, clipB.id],
        [client.reel, reelA.id],
        [client.reel, reelB.id],
      ] as const) {
        expect((await resource.get(id)).id).toBe(id);
      }
      expect(asked).toEqual([
        'POST /power/v1/motion/videos',
        'POST /api/clip/videos',
        'POST /clip/videos',
        'POST /api/reel/videos',
        'POST /reel/videos',
        `GET /power/v1/result/${motion.id}`,
        `GET /v1/result/${clipA.id}`,
        `GET /v1/result/${clipB.id}`,
        `GET /api/v1/videos/${reelA.id}`,
        `GET /api/v1/videos/${reelB.id}`,
      ]);
      expect(clipA.model).toBe('clip3.1-fast');
    } finally {
      await h.close();
    }
  });
});

describe("tasks.list and each family's list (GET /v1/tasks)", () => {
  it('pages newest first and iterates over every page', async () => {
    const h = await listeningGateway({ workers: false });
    try {
      const client = new Mediagate({ baseUrl: h.origin, apiKey: h.key });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await client.pic.create({ model: 'pic', prompt: `n${i}` })).id);
      // newest first is (created, id) descending: an id starts with its creation time (G81), so two
      // tasks made in one millisecond come in the order of their ids, which need not be the order made
      const newest = [...ids].sort().reverse();
      const page = await client.tasks.list({ family: 'pic', limit: 2 });
      expect(page).toMatchObject({ object: 'list', has_more: true });
      expect(page.data.map((t) => t.id)).toEqual([newest[0], newest[1]]);
      expect(typeof page.next_cursor).toBe('string');
      const all: AnyTask[] = [];
      let later = '';
      for await (const t of client.tasks.iterate({ family: 'pic', limit: 2 })) {
        all.push(t);
        // tasks created while the pages are read come before the cursor: none repeated, none missed
        if (all.length === 1) later = (await client.pic.create({ model: 'pic', prompt: 'made while paging' })).id;
      }
      expect(all.map((t) => t.id)).toEqual(newest);
      // lists of statuses and families are sent comma-separated; a time may be an ISO date-time
      const both = await client.tasks.list({ status: ['queued', 'processing'], family: ['pic', 'clip'], created_after: '2000-01-01T00:00:00Z', limit: 100 });
      expect(both.data.length).toBe(6);
      const other = new Mediagate({ baseUrl: h.origin, apiKey: h.otherKey });
      expect((await other.tasks.list()).data).toEqual([]);
      // each family lists its own tasks only
      const clip = await client.clip.create({ model: 'clip_3_1_fast', prompt: 'a boat' });
      expect((await client.clip.list()).data.map((t) => t.id)).toEqual([clip.id]);
      expect((await client.pic.list({ limit: 1 })).data.map((t) => t.id)).toEqual([later]);
      expect((await client.motion.list()).data).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('sseData', () => {
  const stream = (pieces: Uint8Array[]): ReadableStream<Uint8Array> =>
    new ReadableStream({
      start(c) {
        for (const p of pieces) c.enqueue(p);
        c.close();
      },
    });
  const text = ': ping\r\n\r\ndata: {"a":"é€😀"}\r\n\r\ndata: one\ndata:two\n\nevent: x\rdata: three\r\rdata: [DONE]\n\ndata: unterminated';

  it('gives the same events whatever the chunk boundaries (split inside CRLF and inside UTF-8 characters)', async () => {
    const bytes = new TextEncoder().encode(text);
    const expected = ['{"a":"é€😀"}', 'one\ntwo', 'three', '[DONE]'];
    const whole: string[] = [];
    for await (const d of sseData(stream([bytes]))) whole.push(d);
    expect(whole).toEqual(expected);
    for (const size of [1, 2, 3, 5, 7]) {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.slice(i, i + size));
      const got: string[] = [];
      for await (const d of sseData(stream(pieces))) got.push(d);
      expect(got, `pieces of ${size} bytes`).toEqual(expected);
    }
  });

  it('refuses a line or an event longer than its bound, however it arrives, and takes one at the bound', async () => {
    const encode = (t: string) => new TextEncoder().encode(t);
    const read = async (pieces: Uint8Array[], max: number): Promise<string[]> => {
      const got: string[] = [];
      for await (const d of sseData(stream(pieces), max)) got.push(d);
      return got;
    };
    await expect(read([encode(`data: ${'x'.repeat(94)}\n\n`)], 100)).resolves.toEqual(['x'.repeat(94)]);
    // an endless line, in pieces: refused once it passes the bound, not at its (never coming) end
    await expect(
      read(
        Array.from({ length: 50 }, () => encode('y'.repeat(10))),
        100,
      ),
    ).rejects.toThrow(/line is longer than 100 characters/);
    // many short data lines of one event
    await expect(read([encode('data: 0123456789\n'.repeat(20))], 100)).rejects.toThrow(/event is longer than 100 characters/);
  });
});

describe('the API key', () => {
  it("one no header can carry is refused at construction, never echoed (fetch's own error would print it)", () => {
    for (const apiKey of ['mg_firstsecret\nmg_secondsecret', 'mg_a secret', 'mg_\u0000secret']) {
      let message = '';
      try {
        new Mediagate({ baseUrl: g.origin, apiKey });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, JSON.stringify(apiKey)).toMatch(/^Mediagate: apiKey /);
      expect(message).not.toContain('secret');
    }
    expect(() => new Mediagate({ baseUrl: g.origin, apiKey: `${g.key}\n` })).not.toThrow(); // a trailing line break is no part of it
  });
});

describe('the gateway URL', () => {
  /** What a constructor said of its URL: its TypeError's message, or `accepted`. */
  const messageOf = (make: () => unknown): string => {
    try {
      make();
    } catch (err) {
      return err instanceof TypeError ? err.message : `not a TypeError: ${String(err)}`;
    }
    return 'accepted';
  };

  it('one holding a user name or password is refused at construction, never echoed (fetch would refuse every request quoting it) (G459)', () => {
    const withPassword = 'http://ops:hunter2@127.0.0.1:8790';
    const cases: Array<[string, () => unknown]> = [
      ['Mediagate: baseUrl', () => new Mediagate({ baseUrl: withPassword, apiKey: g.key })],
      ['Mediagate: powerBaseUrl', () => new Mediagate({ baseUrl: g.origin, powerBaseUrl: withPassword, apiKey: g.key })],
      ['Mediagate: apiBaseUrl', () => new Mediagate({ baseUrl: g.origin, apiBaseUrl: 'http://ops@127.0.0.1:8790', apiKey: g.key })],
      ['AdminClient: baseUrl', () => new AdminClient({ baseUrl: withPassword, apiKey: g.key })],
    ];
    for (const [option, make] of cases) {
      const message = messageOf(make);
      expect(message).toMatch(new RegExp(`^${option} holds a user name or password`));
      expect(message).not.toMatch(/hunter2|ops/);
    }
    // a relative URL (a page served by the gateway itself) is fetch's to resolve
    expect(messageOf(() => new Mediagate({ baseUrl: '/gateway', apiKey: g.key }))).toBe('accepted');
  });

  it('one holding a query string or fragment is refused at construction, never echoed (paths would follow the query, the key in it quoted by errors) (G466)', () => {
    const cases: Array<[string, () => unknown]> = [
      ['Mediagate: baseUrl', () => new Mediagate({ baseUrl: `${g.origin}/?key=hunter2`, apiKey: g.key })],
      ['Mediagate: powerBaseUrl', () => new Mediagate({ baseUrl: g.origin, powerBaseUrl: `${g.origin}#hunter2`, apiKey: g.key })],
      ['Mediagate: apiBaseUrl', () => new Mediagate({ baseUrl: g.origin, apiBaseUrl: `${g.origin}/gw?token=hunter2`, apiKey: g.key })],
      ['AdminClient: baseUrl', () => new AdminClient({ baseUrl: `${g.origin}?`, apiKey: g.key })],
    ];
    for (const [option, make] of cases) {
      const message = messageOf(make);
      expect(message).toMatch(new RegExp(`^${option} holds a query string or fragment`));
      expect(message).not.toMatch(/hunter2/);
    }
    expect(messageOf(() => new Mediagate({ baseUrl: `${g.origin}/gw/`, apiKey: g.key }))).toBe('accepted');
  });
});
