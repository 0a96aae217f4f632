import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countMotionPrompt } from '../../src/contract/motion-prompt.js';
import type { OutputSpec } from '../../src/contract/output.js';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

// Written out from the interface's motion tables (docs/reference/api/motion.md), D16, G28/G29 and
// the operator's price list (G11, src/contract/catalog.ts), not imported: a wrong list, bound
// or price in src must fail here. Durations: min-max, default, and whether -1 (automatic, renders
// and bills 5 s) is allowed. Prices: credits per second of output (1.5 pro) or per task (2.0).
type Rule = { min: number; max: number; default: number; auto: boolean; perSecond?: number; perTask?: number };
const MOTION_RULES: Record<string, Rule> = {
  motion_1_5_pro_480p: { min: 4, max: 12, default: 5, auto: true, perSecond: 1 },
  motion_1_5_pro_720p: { min: 4, max: 12, default: 5, auto: true, perSecond: 2 },
  motion_1_5_pro_1080p: { min: 4, max: 12, default: 5, auto: true, perSecond: 3 },
  motion_2_0_4s_5s: { min: 1, max: 5, default: 5, auto: false, perTask: 10 },
  motion_2_0_6s_10s: { min: 6, max: 10, default: 10, auto: false, perTask: 20 },
  motion_2_0_11s_15s: { min: 11, max: 15, default: 15, auto: false, perTask: 30 },
  motion_2_0: { min: 2, max: 12, default: 5, auto: false, perTask: 10 },
  motion_2_0_fast: { min: 2, max: 12, default: 5, auto: false, perTask: 8 },
  motion_2_0_pro: { min: 2, max: 12, default: 5, auto: false, perTask: 20 },
  motion_2_0_fast_pro: { min: 2, max: 12, default: 5, auto: false, perTask: 15 },
};
const MOTION_MODELS = Object.keys(MOTION_RULES);
const MOTION_PRO_MODELS = ['motion_1_5_pro_480p', 'motion_1_5_pro_720p', 'motion_1_5_pro_1080p'];
const MOTION_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] as const;
const motionDurationRule = (model: string): Rule => MOTION_RULES[model]!;
const priceOf = (model: string, seconds: number): number => {
  const r = MOTION_RULES[model]!;
  return r.perSecond !== undefined ? r.perSecond * seconds : r.perTask!;
};
/**
 * Pixel sizes by resolution and ratio (D19; other ratios keep the resolution's short
 * side, sides even, G6); `adaptive` without an image falls back to 16:9.
 */
const VIDEO_SIZES: Record<string, Record<(typeof MOTION_RATIOS)[number], [number, number]>> = {
  '480p': { '16:9': [854, 480], '4:3': [640, 480], '1:1': [480, 480], '3:4': [480, 640], '9:16': [480, 854], '21:9': [1120, 480], adaptive: [854, 480] },
  '720p': { '16:9': [1280, 720], '4:3': [960, 720], '1:1': [720, 720], '3:4': [720, 960], '9:16': [720, 1280], '21:9': [1680, 720], adaptive: [1280, 720] },
  '1080p': {
    '16:9': [1920, 1080],
    '4:3': [1440, 1080],
    '1:1': [1080, 1080],
    '3:4': [1080, 1440],
    '9:16': [1080, 1920],
    '21:9': [2520, 1080],
    adaptive: [1920, 1080],
  },
};
const videoSize = (resolution: string, ratio: (typeof MOTION_RATIOS)[number]) => {
  const [width, height] = VIDEO_SIZES[resolution]![ratio];
  return { width, height };
};

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const submit = (payload: unknown) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/motion/videos',
    headers: { ...h.auth(), 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const text = (t = 'a red fox runs through snow') => ({ type: 'text', text: t });
const img = (role?: string, n = 0) => ({ type: 'image_url', image_url: { url: `https://example.com/${n}.png` }, ...(role && { role }) });
const stored = async (id: string) => (await h.store.tasks.get(id))!;
const outputOf = async (id: string) => (await stored(id)).request.output as Extract<OutputSpec, { kind: 'video' }>;
const isPro = (m: string) => (MOTION_PRO_MODELS as readonly string[]).includes(m);
const resolutionOf = (m: string) => (isPro(m) ? m.split('_').pop()! : '720p');

/** The scenarios of the content array, by the images they carry. */
const MODES = {
  'text-to-video': [text()],
  'first frame': [text(), img()],
  'first frame (explicit role)': [text(), img('first_frame')],
  'first + last frame': [text(), img('first_frame', 1), img('last_frame', 2)],
  'reference images': [text(), img('reference_image', 1), img('reference_image', 2)],
  'image only, no text': [img()],
} as const;

async function expect400(payload: unknown, param: string | null, message: RegExp, code = 'invalid_request') {
  const res = await submit(payload);
  expect(res.statusCode).toBe(400);
  const err = body(res).error;
  expect(err).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
  expect(err.message).toMatch(message);
}

describe('motion create: every model x scenario is accepted with the right defaults', () => {
  const cases = MOTION_MODELS.flatMap((model) => Object.keys(MODES).map((mode) => ({ model, mode: mode as keyof typeof MODES })));
  it.each(cases)('$model $mode', async ({ model, mode }) => {
    const window = openSecondsWindow();
    const res = await submit({ model, content: MODES[mode] });
    expect(res.statusCode).toBe(200);
    const b = body(res);
    expect(Object.keys(b).sort()).toEqual(['created', 'error', 'id', 'model', 'object', 'progress', 'status', 'video_url']);
    expect(b).toMatchObject({ object: 'video', model, status: 'queued', progress: 0, video_url: null, error: null });
    expectInWindow(b.created, window);
    const task = await stored(b.id);
    const params = task.request.params as Record<string, unknown>;
    const withImages = mode !== 'text-to-video';
    const ratio = withImages || isPro(model) ? 'adaptive' : '16:9';
    expect(params.ratio).toBe(ratio);
    const out = await outputOf(b.id);
    const rule = motionDurationRule(model);
    expect(out.durationSec).toBe(rule.default);
    expect(out.audio).toBe(isPro(model));
    expect({ width: out.width, height: out.height }).toEqual(videoSize(resolutionOf(model), '16:9'));
    expect(out.adaptiveResolution).toBe(ratio === 'adaptive' ? resolutionOf(model) : undefined);
    expect(task.amount).toBe(priceOf(model, rule.default));
    const media = task.request.media as { firstFrame?: { field: string }; lastFrame?: { field: string }; images: Array<{ field: string }> };
    if (mode.startsWith('first frame')) expect(media.firstFrame?.field).toBe('content[1].image_url.url');
    if (mode === 'first + last frame') expect(media.lastFrame?.field).toBe('content[2].image_url.url');
    if (mode === 'reference images') expect(media.images.map((r) => r.field)).toEqual(['content[1].image_url.url', 'content[2].image_url.url']);
  });
});

describe('motion create: every ratio value plans its pixel size', () => {
  const cases = ['motion_1_5_pro_480p', 'motion_1_5_pro_1080p', 'motion_2_0'].flatMap((model) => MOTION_RATIOS.map((ratio) => ({ model, ratio })));
  it.each(cases)('$model ratio=$ratio', async ({ model, ratio }) => {
    const res = await submit({ model, content: [text()], ratio });
    expect(res.statusCode).toBe(200);
    const out = await outputOf(body(res).id);
    expect({ width: out.width, height: out.height }).toEqual(videoSize(resolutionOf(model), ratio));
  });
  it('an unknown ratio is a 400', () =>
    expect400({ model: 'motion_2_0', content: [text()], ratio: '2:1' }, 'ratio', /ratio must be one of: 16:9, 4:3, 1:1, 3:4, 9:16, 21:9, adaptive/));
  it('an unknown model is a 400', () =>
    expect400({ model: 'motion_1_5', content: [text()] }, 'model', /model must be one of: motion_1_5_pro_480p/, 'unknown_model'));
});

describe('motion create: duration per model, at and just past each bound', () => {
  const models = MOTION_MODELS;
  const ok = models.flatMap((model) => {
    const r = motionDurationRule(model);
    return [
      { model, duration: r.min as number | string, seconds: r.min },
      { model, duration: r.max, seconds: r.max },
      { model, duration: String(r.max), seconds: r.max },
      { model, duration: String(r.min), seconds: r.min },
      ...(r.auto
        ? [
            { model, duration: -1, seconds: 5 },
            { model, duration: '-1', seconds: 5 },
          ]
        : []),
    ];
  });
  it.each(ok)('$model duration=$duration -> $seconds s', async ({ model, duration, seconds }) => {
    const res = await submit({ model, content: [text()], duration });
    expect(res.statusCode).toBe(200);
    const task = await stored(body(res).id);
    expect((await outputOf(task.id)).durationSec).toBe(seconds);
    expect((task.request.params as { duration: number }).duration).toBe(Number(duration));
    expect(task.amount).toBe(priceOf(model, seconds));
  });
  const bad = models.flatMap((model) => {
    const r = motionDurationRule(model);
    return [r.min - 1, r.max + 1, ...(r.auto ? [0, -2] : [-1]), String(r.max + 1)].map((duration) => ({ model, duration }));
  });
  it.each(bad)('$model duration=$duration is a 400', ({ model, duration }) => {
    const r = motionDurationRule(model);
    return expect400({ model, content: [text()], duration }, 'duration', new RegExp(`duration must be an integer from ${r.min} to ${r.max} for ${model}`));
  });
  it.each([5.5, '5s', '', true, null])('duration=%j is a schema 400', (duration) =>
    expect400({ model: 'motion_2_0', content: [text()], duration }, 'duration', /duration has the wrong type or value/),
  );
});

describe('motion create: generate_audio per model', () => {
  const cases = MOTION_MODELS.flatMap((model) => [true, false, undefined].map((generate_audio) => ({ model, generate_audio })));
  it.each(cases)('$model generate_audio=$generate_audio', async ({ model, generate_audio }) => {
    const payload = { model, content: [text()], ...(generate_audio !== undefined && { generate_audio }) };
    if (generate_audio === true && !isPro(model)) {
      await expect400(payload, 'generate_audio', /generate_audio is supported only by motion_1_5_pro_480p, motion_1_5_pro_720p, motion_1_5_pro_1080p/);
      return;
    }
    const res = await submit(payload);
    expect(res.statusCode).toBe(200);
    expect((await outputOf(body(res).id)).audio).toBe(isPro(model) && generate_audio !== false);
  });
  it('generate_audio must be a boolean', () =>
    expect400({ model: 'motion_1_5_pro_720p', content: [text()], generate_audio: 'true' }, 'generate_audio', /generate_audio must be true or false/));
});

describe('motion create: content scenarios and counts', () => {
  const refs = (n: number) => Array.from({ length: n }, (_, i) => img('reference_image', i));
  it.each([1, 2, 3, 4])('%i reference images are accepted', async (n) => {
    const res = await submit({ model: 'motion_2_0', content: [text(), ...refs(n)] });
    expect(res.statusCode).toBe(200);
    expect(((await stored(body(res).id)).request.media as { images: unknown[] }).images).toHaveLength(n);
  });
  it('last frame then first frame (any order) is accepted', async () => {
    expect((await submit({ model: 'motion_2_0', content: [img('last_frame', 1), text(), img(undefined, 2)] })).statusCode).toBe(200);
  });
  it('ignores unknown extra fields (D11)', async () => {
    expect((await submit({ model: 'motion_2_0', content: [{ ...text(), extra: 1 }], seed: 3, watermark: false })).statusCode).toBe(200);
  });

  const cases: Array<{ name: string; content: unknown; param: string | null; message: RegExp; code?: string }> = [
    { name: '5 reference images', content: [text(), ...refs(5)], param: 'content[5]', message: /1 to 4 reference_image images; got 5/ },
    {
      name: 'first frame + reference image',
      content: [text(), img(), img('reference_image', 1)],
      param: 'content[1].role,content[2].role',
      message: /content\[1\] \(a first_frame image\) and content\[2\] \(a reference_image\) cannot be combined/,
      code: 'exclusive_fields',
    },
    {
      name: 'first + last frame + reference image',
      content: [text(), img('reference_image', 1), img('first_frame', 2), img('last_frame', 3)],
      param: 'content[2].role,content[1].role',
      message: /cannot be mixed/,
      code: 'exclusive_fields',
    },
    {
      name: 'last frame + reference image',
      content: [img('last_frame'), img('reference_image', 1)],
      param: 'content[0].role,content[1].role',
      message: /a last_frame image\) and content\[1\] \(a reference_image\)/,
      code: 'exclusive_fields',
    },
    { name: 'last frame alone', content: [text(), img('last_frame')], param: 'content[1].role', message: /a last_frame image requires a first_frame image/ },
    { name: 'two first frames', content: [text(), img(), img('first_frame', 1)], param: 'content[2].role', message: /at most one first_frame image .*got 2/ },
    {
      name: 'two last frames',
      content: [text(), img(), img('last_frame', 1), img('last_frame', 2)],
      param: 'content[3].role',
      message: /at most one last_frame image; got 2/,
    },
    { name: 'two text objects', content: [text(), text('more')], param: 'content[1]', message: /at most one text object; got 2/ },
    { name: 'text object without text', content: [{ type: 'text' }], param: 'content[0].text', message: /content\[0\]\.text is required in a text object/ },
    { name: 'empty text', content: [text('')], param: 'content[0].text', message: /content\[0\]\.text must not be empty/ },
    { name: 'blank text', content: [text('   ')], param: 'content[0].text', message: /content\[0\]\.text must not be blank/ },
    { name: 'text not a string', content: [{ type: 'text', text: 5 }], param: 'content[0].text', message: /must be a string/ },
    {
      name: 'image object without image_url',
      content: [text(), { type: 'image_url' }],
      param: 'content[1].image_url',
      message: /content\[1\]\.image_url is required in an image_url object/,
    },
    {
      name: 'image_url without url',
      content: [text(), { type: 'image_url', image_url: {} }],
      param: 'content[1].image_url.url',
      message: /content\[1\]\.image_url\.url is required/,
    },
    {
      name: 'image url not http',
      content: [text(), { type: 'image_url', image_url: { url: 'ftp://x/y.png' } }],
      param: 'content[1].image_url.url',
      message: /must be an absolute http\(s\) URL/,
    },
    {
      name: 'unknown role',
      content: [text(), img('middle_frame')],
      param: 'content[1].role',
      message: /role must be one of: first_frame, last_frame, reference_image/,
    },
    {
      name: 'unknown content type',
      content: [{ type: 'video_url', video_url: { url: 'https://x/y.mp4' } }],
      param: 'content[0].type',
      message: /content\[0\]\.type must be one of: text, image_url/,
    },
    { name: 'empty content', content: [], param: 'content', message: /content needs at least 1 items/ },
    { name: 'content not an array', content: 'a fox', param: 'content', message: /content must be an array/ },
    { name: 'content item not an object', content: ['a fox'], param: 'content[0]', message: /content\[0\] must be an object/ },
  ];
  it.each(cases)('$name is a 400', ({ content, param, message, code }) => expect400({ model: 'motion_2_0', content }, param, message, code));
  it('missing content is a 400', () => expect400({ model: 'motion_2_0' }, 'content', /content is required/));
  it('missing model is a 400', () => expect400({ content: [text()] }, 'model', /model is required/));
  it('nothing is stored for a rejected request', async () => {
    const count = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await count();
    await submit({ model: 'motion_2_0', content: [text(), img('last_frame')] });
    expect(await count()).toBe(before);
  });
});

describe('motion create: prompt length (D15)', () => {
  const cjk = (n: number) => '狐'.repeat(n);
  const words = (n: number) => Array.from({ length: n }, () => 'fox').join(' ');
  it.each([
    ['500 CJK characters', cjk(500), true],
    ['501 CJK characters', cjk(501), false],
    ['500 CJK characters with CJK punctuation', `${cjk(498)}，。`, true],
    ['501 with CJK punctuation', `${cjk(499)}，。`, false],
    ['500 Japanese kana', 'き'.repeat(500), true],
    ['501 Hangul syllables', '여'.repeat(501), false],
    ['1000 words', words(1000), true],
    ['1001 words', words(1001), false],
    ['1000 words with punctuation and newlines', `${words(999)},\n\tfox! - ...`, true],
    ['mixed: 250 CJK + 500 words', `${cjk(250)} ${words(500)}`, true],
    ['mixed: 250 CJK + 501 words', `${cjk(250)} ${words(501)}`, false],
    ['mixed: 499 CJK + 2 words', `${cjk(499)} a b`, true],
    ['mixed: 500 CJK + 1 word', `${cjk(500)}a`, false],
  ] as const)('%s', async (_name, prompt, accepted) => {
    const res = await submit({ model: 'motion_2_0', content: [text(prompt)] });
    expect(res.statusCode).toBe(accepted ? 200 : 400);
    if (!accepted) {
      expect(body(res).error.param).toBe('content[0].text');
      expect(body(res).error.message).toMatch(
        /content\[0\]\.text is too long: (at most 500 Chinese \(CJK\) characters are allowed \(got 501\)|at most 1000 words are allowed \(got 1001\)|mixed text may hold at most 1000 units)/,
      );
    }
  });
  it('a prompt of one long run counts as one word, and is still at most 20,000 characters (G16)', async () => {
    expect((await submit({ model: 'motion_2_0', content: [text('c'.repeat(20_000))] })).statusCode).toBe(200);
    const res = await submit({ model: 'motion_2_0', content: [text('c'.repeat(20_001))] });
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ param: 'content[0].text', message: 'content[0].text must be at most 20000 characters long (got 20001)' });
  });
  it.each([
    ['a red fox', { cjk: 0, words: 3, units: 3 }],
    ['一只红狐狸', { cjk: 5, words: 0, units: 10 }],
    ['红狐 runs 在雪中, fast!', { cjk: 5, words: 2, units: 12 }],
    ['4K 视频 HDR', { cjk: 2, words: 2, units: 6 }],
    ['— ... !!', { cjk: 0, words: 0, units: 0 }],
  ] as const)('counts %j', (prompt, want) => expect(countMotionPrompt(prompt)).toEqual(want));
});

describe('motion create: service tier', () => {
  it.each([
    [undefined, 'default', 1],
    ['default', 'default', 1],
    ['flex', 'flex', 0.5],
  ] as const)('service_tier=%s is stored as %s and priced x%s', async (tier, stored_, factor) => {
    const res = await submit({ model: 'motion_1_5_pro_720p', content: [text()], duration: 8, ...(tier && { service_tier: tier }) });
    expect(res.statusCode).toBe(200);
    const task = await stored(body(res).id);
    expect((task.request.params as { service_tier: string }).service_tier).toBe(stored_);
    expect(task.amount).toBe(2 * 8 * factor);
  });
  it('an unknown tier is a 400', () =>
    expect400({ model: 'motion_2_0', content: [text()], service_tier: 'batch' }, 'service_tier', /service_tier must be one of: default, flex/));
});

describe('motion query: shapes by state', () => {
  const query = async (id: string) => body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
  /** Claims tasks until `id` is the one claimed (the store hands out the oldest first). */
  const claim = async (id: string) => {
    for (;;) {
      const t = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
      if (!t) throw new Error(`task ${id} was not claimable`);
      if (t.id === id) return t;
    }
  };
  const create = async () => body(await submit({ model: 'motion_2_0_6s_10s', content: [text()] })).id as string;

  it('queued', async () => {
    const id = await create();
    const b = await query(id);
    expect(b).toEqual({
      id,
      object: 'video',
      created: expect.any(Number),
      model: 'motion_2_0_6s_10s',
      status: 'queued',
      progress: 0,
      video_url: null,
      actualDuration: null,
      error: null,
      queue_reason: null,
    });
  });
  it('completed: signed video_url and actualDuration', async () => {
    const id = await create();
    const t = await claim(id);
    expect((await query(id)).status).toBe('processing');
    await completeTask(
      h.store.tasks,
      t,
      'w-test',
      { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration: 10 },
      Date.now() + 1000,
    );
    const b = await query(id);
    expect(b).toMatchObject({ id, object: 'video', status: 'completed', progress: 100, actualDuration: 10, error: null });
    expect(b.video_url).toMatch(/^https?:\/\/.+video\.mp4/);
  });
  it('failed: error message, no url', async () => {
    const id = await create();
    await failTask(h.store.tasks, await claim(id), 'w-test', 'the model refused', Date.now() + 1000);
    expect(await query(id)).toMatchObject({ status: 'failed', video_url: null, actualDuration: null, error: 'the model refused' });
  });
});

describe('motion routes honour MEDIAGATE_POWER_PREFIX', () => {
  it('serves create under the power prefix only', async () => {
    const hp = await createHarness({ workers: false, reviewMedia: false, env: { MEDIAGATE_POWER_PREFIX: '/power' } });
    try {
      const payload = JSON.stringify({ model: 'motion_2_0', content: [text()] });
      const headers = { ...hp.auth(), 'content-type': 'application/json' };
      const res = await hp.app.inject({ method: 'POST', url: '/power/v1/motion/videos', headers, payload });
      expect(res.statusCode).toBe(200);
      expect((await hp.app.inject({ method: 'GET', url: `/power/v1/result/${body(res).id}`, headers: hp.auth() })).statusCode).toBe(200);
      expect((await hp.app.inject({ method: 'POST', url: '/v1/motion/videos', headers, payload })).statusCode).toBe(404);
    } finally {
      await hp.close();
    }
  });
});
