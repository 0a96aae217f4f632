import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

// Written out from the interface's clip tables (docs/reference/api/clip.md), G20/G23 and the
// operator's price list (G11, src/contract/catalog.ts), not imported: a wrong list, limit or
// price in src must fail here.
const CLIP_FORM_A_MODELS = ['clip3.1-fast'] as const;
const CLIP_FORM_B_MODELS = ['clip_3_1_fast_stable', 'clip_3_1_pro_stable', 'clip_3_1_fast', 'clip_3_1_pro'] as const;
const CLIP_MODELS = [...CLIP_FORM_A_MODELS, ...CLIP_FORM_B_MODELS] as const;
type ClipModel = (typeof CLIP_MODELS)[number];
const CLIP_SIZES = ['1280x720', '720x1280'] as const;
const CLIP_ASPECT_RATIOS = ['16:9', '9:16'] as const;
/** Form B `resolution`, case-insensitive (G23). */
const CLIP_RESOLUTION_SPELLINGS = ['720p', '720P', '1080p', '1080P', '4K', '4k'] as const;
/** Form B models that offer 4K; the two `_stable` ones reject it. */
const CLIP_4K_MODELS: readonly string[] = ['clip_3_1_fast', 'clip_3_1_pro'];
/** Reference images per model: `clip_3_1_fast_stable` is first/last-frame only; `clip_3_1_pro` takes 3 (G20). */
const CLIP_REFERENCE_LIMITS: Record<ClipModel, number> = {
  'clip3.1-fast': 3,
  clip_3_1_fast_stable: 0,
  clip_3_1_pro_stable: 3,
  clip_3_1_fast: 3,
  clip_3_1_pro: 3,
};
/** Credits per task. */
const CLIP_PRICES: Record<ClipModel, number> = { 'clip3.1-fast': 10, clip_3_1_fast_stable: 10, clip_3_1_pro_stable: 20, clip_3_1_fast: 10, clip_3_1_pro: 20 };

let h: Harness;
/** Same app with `MEDIAGATE_API_PREFIX=/api`: Form A and Form B paths differ. */
let hp: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
  hp = await createHarness({ workers: false, reviewMedia: false, env: { MEDIAGATE_API_PREFIX: '/api' } });
});
afterAll(async () => {
  await h.close();
  await hp.close();
});

const post = (payload: unknown, url = '/clip/videos', harness = h) =>
  harness.app.inject({
    method: 'POST',
    url,
    headers: { ...harness.auth(), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
const get = (url: string, harness = h, key?: string) => harness.app.inject({ method: 'GET', url, headers: harness.auth(key) });
const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/ref-${i}.png`);
const FIRST = 'https://example.com/first.png';
const LAST = 'https://example.com/last.png';
const isB = (model: string | undefined) => model !== undefined && (CLIP_FORM_B_MODELS as readonly string[]).includes(model);
/** A minimal valid body for a model (`undefined` = Form A by default). */
const base = (model: ClipModel | undefined) => ({ ...(model && { model }), prompt: 'a paper boat on a river' });
const ALL_MODELS: Array<ClipModel | undefined> = [undefined, ...CLIP_MODELS];

async function plannedOf(harness: Harness, id: string) {
  const task = (await harness.store.tasks.get(id))!;
  return {
    task,
    output: task.request.output as { kind: string; width: number; height: number; durationSec: number; audio: boolean },
    params: task.request.params as Record<string, unknown>,
    media: task.request.media as Record<string, any>,
  };
}

async function expect400(payload: unknown, param: string | null, message: RegExp, code = 'invalid_request') {
  const res = await post(payload);
  expect(res.statusCode).toBe(400);
  const err = body(res).error;
  expect(err).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
  expect(err.message).toMatch(message);
}

/** Moves the task to processing (claiming older queued tasks on the way) and then finishes it. */
async function finish(harness: Harness, id: string, how: 'complete' | 'fail') {
  for (;;) {
    const claimed = await claimNextTask(harness.store.tasks, ['sandbox'], 'test-worker', 60_000);
    if (!claimed) throw new Error(`task ${id} was not claimable`);
    if (claimed.id !== id) continue;
    return how === 'complete'
      ? (await completeTask(
          harness.store.tasks,
          claimed,
          'test-worker',
          { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration: 8 },
          Date.now() + 86_400_000,
        ))!
      : (await failTask(harness.store.tasks, claimed, 'test-worker', 'sandbox: failed on purpose', Date.now() + 86_400_000))!;
  }
}

describe('clip Form A: every size / aspect_ratio is planned at its pixel size, 8 s, no audio', () => {
  const cases = [undefined, 'clip3.1-fast' as const].flatMap((model) => [
    { model, size: undefined, aspect_ratio: undefined, width: 1280, height: 720 },
    ...CLIP_SIZES.map((size) => ({ model, size, aspect_ratio: undefined, width: size === '1280x720' ? 1280 : 720, height: size === '1280x720' ? 720 : 1280 })),
    ...CLIP_ASPECT_RATIOS.map((aspect_ratio) => ({
      model,
      size: undefined,
      aspect_ratio,
      width: aspect_ratio === '16:9' ? 1280 : 720,
      height: aspect_ratio === '16:9' ? 720 : 1280,
    })),
  ]);
  it.each(cases)('model=$model size=$size aspect_ratio=$aspect_ratio -> $width x $height', async ({ model, size, aspect_ratio, width, height }) => {
    const window = openSecondsWindow();
    const res = await post({ ...base(model), ...(size && { size }), ...(aspect_ratio && { aspect_ratio }) });
    expect(res.statusCode).toBe(200);
    const b = body(res);
    expect(b).toEqual({
      id: expect.stringMatching(/^task_/),
      object: 'video.generation',
      created: expect.any(Number),
      model: 'clip3.1-fast',
      status: 'queued',
      progress: 0,
      error: null,
    });
    expectInWindow(b.created, window);
    const { task, output, params } = await plannedOf(h, b.id);
    expect(task.form).toBe('A');
    expect(task.amount).toBe(CLIP_PRICES['clip3.1-fast']);
    expect(output).toMatchObject({ kind: 'video', width, height, durationSec: 8, audio: false });
    expect(params).toMatchObject({ prompt: 'a paper boat on a river', duration: 8, size: `${width}x${height}` });
  });
});

describe('clip Form B: every model x resolution spelling x aspect_ratio', () => {
  const SIDES = { '720p': [1280, 720], '1080p': [1920, 1080], '4k': [3840, 2160] } as const;
  const cases = CLIP_FORM_B_MODELS.flatMap((model) =>
    [undefined, ...CLIP_RESOLUTION_SPELLINGS].flatMap((resolution) =>
      [undefined, ...CLIP_ASPECT_RATIOS].map((aspect_ratio) => ({ model, resolution, aspect_ratio })),
    ),
  );
  it.each(cases)('$model resolution=$resolution aspect_ratio=$aspect_ratio', async ({ model, resolution, aspect_ratio }) => {
    const res = await post({ ...base(model), ...(resolution && { resolution }), ...(aspect_ratio && { aspect_ratio }) });
    const is4k = resolution?.toLowerCase() === '4k';
    if (is4k && !CLIP_4K_MODELS.includes(model)) {
      expect(res.statusCode).toBe(400);
      expect(body(res).error).toMatchObject({ param: 'resolution', code: 'invalid_request' });
      expect(body(res).error.message).toMatch(new RegExp(`resolution 4K is not available for ${model}`));
      return;
    }
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ object: 'video', model, status: 'queued', error: null, progress: 0 });
    const { task, output, params } = await plannedOf(h, body(res).id);
    expect(task.form).toBe('B');
    expect(task.amount).toBe(CLIP_PRICES[model]);
    const [long, short] = SIDES[(resolution ?? '720p').toLowerCase() as keyof typeof SIDES];
    const portrait = aspect_ratio === '9:16';
    expect(output).toMatchObject({ kind: 'video', width: portrait ? short : long, height: portrait ? long : short, durationSec: 8, audio: false });
    expect(params.resolution).toBe(is4k ? '4K' : (resolution ?? '720p').toLowerCase());
  });
});

describe('clip duration / seconds: only 8, integer or string of digits, on every model', () => {
  const cases = ALL_MODELS.flatMap((model) =>
    (['duration', 'seconds'] as const).flatMap((field) =>
      [8, '8', 4, 10, '10', 0, -8, '15'].map((value) => ({ model, field, value, ok: Number(value) === 8 })),
    ),
  );
  it.each(cases)('model=$model $field=$value ok=$ok', async ({ model, field, value, ok }) => {
    const res = await post({ ...base(model), [field]: value });
    if (ok) {
      expect(res.statusCode).toBe(200);
      expect((await plannedOf(h, body(res).id)).output.durationSec).toBe(8);
      return;
    }
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ param: field, code: 'invalid_request' });
    expect(body(res).error.message).toMatch(new RegExp(`${field} must be 8`));
  });
  it.each([8.5, '8s', 'eight', true, null])('duration=%j has the wrong type', async (value) => {
    await expect400({ ...base(undefined), duration: value }, 'duration', /duration/);
  });
});

describe('clip exclusive pairs: a 400 naming both members, on every model', () => {
  const pairs: Array<{ name: string; extra: Record<string, unknown>; param: string }> = [
    { name: 'size + aspect_ratio', extra: { size: '1280x720', aspect_ratio: '16:9' }, param: 'size,aspect_ratio' },
    { name: 'duration + seconds', extra: { duration: 8, seconds: 8 }, param: 'duration,seconds' },
    { name: 'duration + seconds as strings', extra: { duration: '8', seconds: '8' }, param: 'duration,seconds' },
    { name: 'input_reference + image_urls', extra: { input_reference: urls(1), image_urls: urls(1) }, param: 'input_reference,image_urls' },
    { name: 'first_image + input_reference', extra: { first_image: FIRST, input_reference: urls(1) }, param: 'first_image,input_reference' },
    { name: 'first_image + image_urls', extra: { first_image: FIRST, image_urls: urls(2) }, param: 'first_image,image_urls' },
    { name: 'first + last + image_urls', extra: { first_image: FIRST, last_image: LAST, image_urls: urls(1) }, param: 'first_image,last_image,image_urls' },
  ];
  const cases = ALL_MODELS.flatMap((model) => pairs.map((p) => ({ model, ...p })));
  it.each(cases)('model=$model $name', async ({ model, extra, param }) => {
    const [a, b] = param.split(',');
    await expect400({ ...base(model), ...extra }, param, new RegExp(`${a}.*${b}`), 'exclusive_fields');
  });
});

describe('clip reference images: every model at and just past its count', () => {
  const cases = ALL_MODELS.flatMap((model) =>
    (['input_reference', 'image_urls'] as const).flatMap((field) => {
      const limit = CLIP_REFERENCE_LIMITS[model ?? 'clip3.1-fast'];
      return [
        { model, field, n: limit, ok: true },
        { model, field, n: limit + 1, ok: false },
      ];
    }),
  );
  it.each(cases)('model=$model $field with $n images ok=$ok', async ({ model, field, n, ok }) => {
    const res = await post({ ...base(model), [field]: urls(n) });
    if (ok) {
      expect(res.statusCode).toBe(200);
      const { media, params } = await plannedOf(h, body(res).id);
      expect(media.images).toEqual(urls(n).map((url, i) => ({ url, field: `${field}[${i}]` })));
      if (n > 0) expect(params[field]).toEqual(urls(n));
      return;
    }
    expect(res.statusCode).toBe(400);
    expect(body(res).error.param).toBe(field);
    expect(body(res).error.message).toMatch(
      n === 1
        ? /clip_3_1_fast_stable supports first\/last-frame mode only and does not accept reference images/
        : new RegExp(`${field} allows at most 3 items \\(got 4\\)`),
    );
  });
});

describe('clip frames: first_image alone, first + last, last alone refused, on every model', () => {
  const cases = ALL_MODELS.flatMap((model) => [
    { model, extra: { first_image: FIRST }, ok: true },
    { model, extra: { first_image: FIRST, last_image: LAST }, ok: true },
    { model, extra: { last_image: LAST }, ok: false },
  ]);
  it.each(cases)('model=$model $extra', async ({ model, extra, ok }) => {
    const res = await post({ ...base(model), ...extra });
    if (!ok) {
      expect(res.statusCode).toBe(400);
      expect(body(res).error).toMatchObject({ param: 'last_image', code: 'invalid_request', message: 'last_image requires first_image' });
      return;
    }
    expect(res.statusCode).toBe(200);
    const { media } = await plannedOf(h, body(res).id);
    expect(media.firstFrame).toEqual({ url: FIRST, field: 'first_image' });
    if ('last_image' in extra) expect(media.lastFrame).toEqual({ url: LAST, field: 'last_image' });
  });
});

describe('clip: other broken rules are 400s naming the field and the rule', () => {
  const cases: Array<{ name: string; payload: unknown; param: string; message: RegExp; code?: string }> = [
    {
      name: 'unknown model',
      payload: { model: 'clip-4', prompt: 'x' },
      param: 'model',
      message: /model must be one of: clip3.1-fast, clip_3_1_fast_stable/,
      code: 'unknown_model',
    },
    { name: 'missing prompt', payload: { model: 'clip_3_1_pro' }, param: 'prompt', message: /prompt is required/ },
    { name: 'empty prompt', payload: { prompt: '' }, param: 'prompt', message: /prompt must not be empty/ },
    { name: 'unknown size', payload: { prompt: 'x', size: '1920x1080' }, param: 'size', message: /size must be one of: 1280x720, 720x1280/ },
    {
      name: 'aspect ratio with resolution suffix',
      payload: { model: 'clip_3_1_fast', prompt: 'x', aspect_ratio: '16:9-1080p' },
      param: 'aspect_ratio',
      message: /aspect_ratio must be one of: 16:9, 9:16/,
    },
    { name: 'unknown aspect ratio', payload: { prompt: 'x', aspect_ratio: '1:1' }, param: 'aspect_ratio', message: /aspect_ratio must be one of/ },
    {
      name: 'unknown resolution',
      payload: { model: 'clip_3_1_pro', prompt: 'x', resolution: '480p' },
      param: 'resolution',
      message: /resolution must be one of: 720p/,
    },
    {
      name: 'resolution on Form A',
      payload: { prompt: 'x', resolution: '1080p' },
      param: 'resolution',
      message: /resolution is accepted only by the Form B models/,
    },
    {
      name: 'size on Form B',
      payload: { model: 'clip_3_1_fast', prompt: 'x', size: '720x1280' },
      param: 'size',
      message: /size is accepted only by clip3.1-fast \(Form A\)/,
    },
    {
      name: 'reference URL not http',
      payload: { prompt: 'x', image_urls: ['ftp://a/b.png'] },
      param: 'image_urls[0]',
      message: /image_urls\[0\] must be an absolute http\(s\) URL/,
    },
    {
      name: 'first_image not a URL',
      payload: { prompt: 'x', first_image: 'first.png' },
      param: 'first_image',
      message: /first_image must be an absolute http\(s\) URL/,
    },
    {
      name: 'input_reference not an array',
      payload: { prompt: 'x', input_reference: FIRST },
      param: 'input_reference',
      message: /input_reference must be an array/,
    },
  ];
  it.each(cases)('$name', async ({ payload, param, message, code }) => {
    await expect400(payload, param, message, code);
  });

  it('nothing is stored for a rejected request', async () => {
    const count = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await count();
    await post({ ...base('clip_3_1_fast_stable'), input_reference: urls(1) });
    await post({ ...base(undefined), duration: 10 });
    expect(await count()).toBe(before);
  });
  it('ignores unknown extra fields (D11)', async () => {
    expect((await post({ ...base(undefined), n: 2, style: 'film' })).statusCode).toBe(200);
  });
});

describe('clip paths: the form follows model, never the path (D2)', () => {
  const cases = ['/api/clip/videos', '/clip/videos'].flatMap((url) => ALL_MODELS.map((model) => ({ url, model })));
  it.each(cases)('$url model=$model', async ({ url, model }) => {
    const res = await post(base(model), url, hp);
    expect(res.statusCode).toBe(200);
    expect(body(res).object).toBe(isB(model) ? 'video' : 'video.generation');
    expect((await hp.store.tasks.get(body(res).id))!.form).toBe(isB(model) ? 'B' : 'A');
  });
  it('without a prefix both forms share /clip/videos', async () => {
    expect(body(await post(base(undefined))).object).toBe('video.generation');
    expect(body(await post(base('clip_3_1_pro'))).object).toBe('video');
  });
  it('Form A paths are not served at the wrong prefix', async () => {
    expect((await post(base(undefined), '/api/clip/videos', h)).statusCode).toBe(404);
  });

  it('the overview families clipu and xvid are not served: a guessed path is a 404 route_not_found (G432)', async () => {
    for (const url of ['/clipu/videos', '/v1/clipu/videos', '/xvid/videos', '/v1/xvid/videos']) {
      const res = await post(base(undefined), url);
      expect(res.statusCode).toBe(404);
      expect(body(res)).toMatchObject({ error: { code: 'route_not_found' } });
    }
  });
});

describe('clip query replies (endpoint 5) by form and status', () => {
  const cases = [...CLIP_FORM_A_MODELS, ...CLIP_FORM_B_MODELS].flatMap((model) =>
    (['queued', 'completed', 'failed'] as const).map((status) => ({ model, status })),
  );
  it.each(cases)('$model $status', async ({ model, status }) => {
    const id = body(await post(base(model))).id as string;
    if (status !== 'queued') await finish(h, id, status === 'completed' ? 'complete' : 'fail');
    for (const url of [`/v1/result/${id}`, `/v1/videos/${id}`, `/v1/reel/videos/${id}`]) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      const b = body(res);
      expect(b).toMatchObject({
        id,
        object: isB(model) ? 'video' : 'video.generation',
        model,
        status,
        created: expect.any(Number),
        progress: status === 'completed' ? 100 : expect.any(Number),
        video_url: status === 'completed' ? expect.stringMatching(/^https?:\/\/.*video\.mp4/) : null,
        error: status === 'failed' ? 'sandbox: failed on purpose' : null,
      });
      if (status === 'completed') expect(b.actualDuration).toBe(8);
      else expect(b).not.toHaveProperty('actualDuration');
    }
  });
  it("another key's clip task is a 404", async () => {
    const id = body(await post(base(undefined))).id as string;
    const res = await get(`/v1/result/${id}`, h, h.otherKey);
    expect(res.statusCode).toBe(404);
    expect(body(res).error.code).toBe('task_not_found');
  });
});
