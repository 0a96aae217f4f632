import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';

// Property-based sweep over every create endpoint: random and mutated bodies (from a valid body
// per endpoint), raw malformed bodies and wrong content types. Never a 5xx; every refusal is the
// family's JSON error body; the server keeps answering.
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

type Style = 'standard' | 'videos-create' | 'chat';
const ENDPOINTS: Array<[string, Style, Record<string, unknown>]> = [
  ['/v1/pic/images', 'standard', { model: 'pic-2', prompt: 'a fox', resolution: '2k', size: '16:9', image_urls: ['https://example.com/a.png'] }],
  [
    '/clip/videos',
    'standard',
    { model: 'clip_3_1_fast', prompt: 'a fox', resolution: '1080p', aspect_ratio: '9:16', first_image: 'https://example.com/a.png' },
  ],
  ['/reel/videos', 'standard', { model: 'reel-2', prompt: 'a fox', size: '1280x720', duration: 10, input_reference: ['https://example.com/a.png'] }],
  [
    '/v1/motion/videos',
    'standard',
    {
      model: 'motion_1_5_pro_720p',
      content: [
        { type: 'text', text: 'a fox' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' },
      ],
      ratio: '16:9',
      duration: 5,
      generate_audio: true,
    },
  ],
  ['/v1/videos/videos', 'videos-create', { model: 'videos', prompt: 'a fox', duration: 5, ratio: '9:16', referenceImages: ['https://example.com/a.png'] }],
  [
    '/v2/model-center/tasks',
    'standard',
    { model: 'sd_2.0_fast_discount', prompt: 'a fox', duration: 5, reference_images: ['https://example.com/a.png'], aspect_ratio: '1:1', seed: 7 },
  ],
  ['/v1/chat/completions', 'chat', { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hi' }], temperature: 1, max_completion_tokens: 5 }],
];

function expectFamilyError(style: Style, status: number, body: unknown): void {
  if (style === 'videos-create') {
    expect(body).toMatchObject({ code: String(status), data: null });
    expect(typeof (body as { msg: unknown }).msg).toBe('string');
  } else if (style === 'chat') {
    expect(body).toMatchObject({ code: String(status), data: null, success: false });
    expect(typeof (body as { msg: unknown }).msg).toBe('string');
  } else {
    const err = (body as { error: { message: unknown; type: unknown; code: unknown } }).error;
    expect(typeof err.message).toBe('string');
    expect(typeof err.type).toBe('string');
    expect(typeof err.code).toBe('string');
  }
}

/** A JSON value of any shape: what a confused or hostile client may send for any field. */
const anyJson = fc.jsonValue({ maxDepth: 4 });

/** The valid body with one field dropped, replaced by any JSON value, or an extra field added. */
function mutated(base: Record<string, unknown>) {
  const keys = Object.keys(base);
  return fc.oneof(
    fc.constantFrom(...keys).map((k) => {
      const b = { ...base };
      delete b[k];
      return b;
    }),
    fc.tuple(fc.constantFrom(...keys), anyJson).map(([k, v]) => ({ ...base, [k]: v })),
    fc.tuple(fc.string({ maxLength: 12 }), anyJson).map(([k, v]) => ({ ...base, [k]: v })),
    fc
      .tuple(
        fc.constantFrom(...keys),
        fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53, 0.5, '', ' ', '8', '\u0000', 'a\ud800b', 'x'.repeat(30_000), [], {}, null, true),
      )
      .map(([k, v]) => ({ ...base, [k]: v })),
  );
}

describe.each(ENDPOINTS)('%s', (url, style, base) => {
  it('random and mutated JSON bodies: never a 5xx, always the family error body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated(base), anyJson), async (body) => {
        const res = await h.app.inject({ method: 'POST', url, headers: { ...h.auth(), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode >= 400) expectFamilyError(style, res.statusCode, res.json());
      }),
      { numRuns: 120 },
    );
  }, 120_000);

  it('raw malformed bodies and content types: a 4xx in the family body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 200 }), fc.constant(JSON.stringify(base).slice(0, 20)), fc.constant('{'.repeat(5000))),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/octet-stream'),
        async (payload, type) => {
          const res = await h.app.inject({ method: 'POST', url, headers: { ...h.auth(), 'content-type': type }, payload });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode >= 400) expectFamilyError(style, res.statusCode, res.json());
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});

it('the server still answers after the sweep', async () => {
  const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'still here' } });
  expect(res.statusCode).toBe(200);
});
