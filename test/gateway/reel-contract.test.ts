import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

// Written out from the interface's reel tables (docs/reference/api/reel.md; the overview models too),
// G24 and the operator's price list (G11, src/contract/catalog.ts), not imported: a wrong
// list, duration, limit or price in src must fail here. Durations: allowed values, smallest first
// (the default, G24); images: the limit of input_reference and image_urls (3 Form A, 1 Form B).
const A = (durations: number[], price: number) => ({ form: 'A' as const, durations, maxImages: 3, price });
const B = (price: number) => ({ form: 'B' as const, durations: [4, 8, 12], maxImages: 1, price });
const REEL_MODEL_RULES = {
  'reel-2': A([10, 15], 15),
  'reel-2-stable': A([10, 15], 15),
  'reel-2-pro': A([10, 15, 25], 30),
  reel2Stable: A([10, 15], 15),
  reelOa2Plus: B(20),
  reelOa2Pro: B(40),
  reelOa2: B(20),
  reelOa2Stable: B(20),
};
type ReelModel = keyof typeof REEL_MODEL_RULES;
const REEL_MODELS = Object.keys(REEL_MODEL_RULES) as ReelModel[];
const REEL_SIZES = ['720x1280', '1280x720'] as const;
const REEL_ASPECT_RATIOS = ['16:9', '9:16'] as const;

let h: Harness;
/** Same app with `MEDIAGATE_API_PREFIX=/api`: the Form A paths move under /api. */
let hp: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
  hp = await createHarness({ workers: false, reviewMedia: false, env: { MEDIAGATE_API_PREFIX: '/api' } });
});
afterAll(async () => {
  await h.close();
  await hp.close();
});

const post = (payload: unknown, url = '/reel/videos', harness = h) =>
  harness.app.inject({
    method: 'POST',
    url,
    headers: { ...harness.auth(), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
const get = (url: string, harness = h, key?: string) => harness.app.inject({ method: 'GET', url, headers: harness.auth(key) });
const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/ref-${i}.png`);
const base = (model: ReelModel) => ({ model, prompt: 'a lighthouse at dusk' });
const rules = (model: ReelModel) => REEL_MODEL_RULES[model];

async function plannedOf(harness: Harness, id: string) {
  const task = (await harness.store.tasks.get(id))!;
  return {
    task,
    output: task.request.output as { kind: string; width: number; height: number; durationSec: number; audio: boolean },
    params: task.request.params as Record<string, unknown>,
    media: task.request.media as Record<string, any>,
  };
}

async function expect400(payload: unknown, param: string | null, message: RegExp, code = 'invalid_request', url = '/reel/videos') {
  const res = await post(payload, url);
  expect(res.statusCode).toBe(400);
  const err = body(res).error;
  expect(err).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
  expect(err.message).toMatch(message);
}

/** Moves the task to processing (claiming older queued tasks on the way) and then finishes it. */
async function finish(harness: Harness, id: string, how: 'complete' | 'fail', actualDuration: number) {
  for (;;) {
    const claimed = await claimNextTask(harness.store.tasks, ['sandbox'], 'test-worker', 60_000);
    if (!claimed) throw new Error(`task ${id} was not claimable`);
    if (claimed.id !== id) continue;
    return how === 'complete'
      ? (await completeTask(
          harness.store.tasks,
          claimed,
          'test-worker',
          { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration },
          Date.now() + 86_400_000,
        ))!
      : (await failTask(harness.store.tasks, claimed, 'test-worker', 'sandbox: failed on purpose', Date.now() + 86_400_000))!;
  }
}

describe('reel create: every model x size / aspect_ratio, default duration the smallest allowed', () => {
  const shapes = [
    { size: undefined, aspect_ratio: undefined, width: 720, height: 1280 },
    ...REEL_SIZES.map((size) => ({ size, aspect_ratio: undefined, width: size === '1280x720' ? 1280 : 720, height: size === '1280x720' ? 720 : 1280 })),
    ...REEL_ASPECT_RATIOS.map((aspect_ratio) => ({
      size: undefined,
      aspect_ratio,
      width: aspect_ratio === '16:9' ? 1280 : 720,
      height: aspect_ratio === '16:9' ? 720 : 1280,
    })),
  ];
  const cases = REEL_MODELS.flatMap((model) => shapes.map((s) => ({ model, ...s })));
  it.each(cases)('$model size=$size aspect_ratio=$aspect_ratio -> $width x $height', async ({ model, size, aspect_ratio, width, height }) => {
    const window = openSecondsWindow();
    const res = await post({ ...base(model), ...(size && { size }), ...(aspect_ratio && { aspect_ratio }) });
    expect(res.statusCode).toBe(200);
    const b = body(res);
    expect(b).toEqual({
      id: expect.stringMatching(/^task_/),
      object: 'video.generation',
      created: expect.any(Number),
      model,
      status: 'queued',
      progress: 0,
      video_url: null,
      error: null,
    });
    expectInWindow(b.created, window);
    const { task, output, params } = await plannedOf(h, b.id);
    expect(task.form).toBe(rules(model).form);
    expect(task.amount).toBe(rules(model).price);
    const duration = rules(model).form === 'A' ? 10 : 4;
    expect(output).toMatchObject({ kind: 'video', width, height, durationSec: duration, audio: false });
    expect(params).toMatchObject({ prompt: 'a lighthouse at dusk', duration, size: `${width}x${height}` });
  });
});

describe('reel duration / seconds: allowed values per model, integer or string of digits', () => {
  const values = [4, 8, 10, 12, 15, 25, 5, 0, 30];
  const cases = REEL_MODELS.flatMap((model) =>
    (['duration', 'seconds'] as const).flatMap((field) =>
      values.flatMap((v) => [v, String(v)].map((value) => ({ model, field, value, ok: rules(model).durations.includes(v) }))),
    ),
  );
  it.each(cases)('$model $field=$value ok=$ok', async ({ model, field, value, ok }) => {
    const res = await post({ ...base(model), [field]: value });
    if (ok) {
      expect(res.statusCode).toBe(200);
      const { output, params } = await plannedOf(h, body(res).id);
      expect(output.durationSec).toBe(Number(value));
      expect(params.duration).toBe(Number(value));
      return;
    }
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ param: field, code: 'invalid_request' });
    expect(body(res).error.message).toMatch(new RegExp(`${field} must be one of ${rules(model).durations.join(', ')} for ${model} \\(got ${Number(value)}\\)`));
  });
  it.each([10.5, '10s', 'ten', false, null])('duration=%j has the wrong type', async (value) => {
    await expect400({ ...base('reel-2'), duration: value }, 'duration', /duration/);
  });
});

describe('reel exclusive pairs: a 400 naming both members, on every model', () => {
  const pairs = [
    { name: 'size + aspect_ratio', extra: { size: '720x1280', aspect_ratio: '9:16' }, param: 'size,aspect_ratio' },
    { name: 'duration + seconds', extra: { duration: 8, seconds: 8 }, param: 'duration,seconds' },
    { name: 'duration + seconds as strings', extra: { duration: '10', seconds: '10' }, param: 'duration,seconds' },
    { name: 'input_reference + image_urls', extra: { input_reference: urls(1), image_urls: urls(1) }, param: 'input_reference,image_urls' },
  ];
  const cases = REEL_MODELS.flatMap((model) => pairs.map((p) => ({ model, ...p })));
  it.each(cases)('$model $name', async ({ model, extra, param }) => {
    const [a, b] = param.split(',');
    await expect400({ ...base(model), ...extra }, param, new RegExp(`${a} and ${b} are mutually exclusive`), 'exclusive_fields');
  });
});

describe('reel reference images: every model at and just past its count (Form A 3, Form B 1)', () => {
  const cases = REEL_MODELS.flatMap((model) =>
    (['input_reference', 'image_urls'] as const).flatMap((field) => [
      { model, field, n: rules(model).maxImages, ok: true },
      { model, field, n: rules(model).maxImages + 1, ok: false },
    ]),
  );
  it.each(cases)('$model $field with $n images ok=$ok', async ({ model, field, n, ok }) => {
    const res = await post({ ...base(model), [field]: urls(n) });
    if (ok) {
      expect(res.statusCode).toBe(200);
      const { media, params } = await plannedOf(h, body(res).id);
      expect(media.images).toEqual(urls(n).map((url, i) => ({ url, field: `${field}[${i}]` })));
      expect(params[field]).toEqual(urls(n));
      return;
    }
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ param: field, code: 'invalid_request' });
    expect(body(res).error.message).toMatch(new RegExp(`${field} allows at most ${rules(model).maxImages} item`));
  });
});

describe('reel: other broken rules are 400s naming the field and the rule', () => {
  const cases: Array<{ name: string; payload: unknown; param: string; message: RegExp; code?: string }> = [
    { name: 'missing model', payload: { prompt: 'x' }, param: 'model', message: /model is required/ },
    {
      name: 'unknown model',
      payload: { model: 'reel-3', prompt: 'x' },
      param: 'model',
      message: /model must be one of: reel-2, reel-2-stable, reel-2-pro/,
      code: 'unknown_model',
    },
    { name: 'missing prompt', payload: { model: 'reelOa2Pro' }, param: 'prompt', message: /prompt is required/ },
    { name: 'empty prompt', payload: { model: 'reel-2', prompt: '' }, param: 'prompt', message: /prompt must not be empty/ },
    { name: 'unknown size', payload: { model: 'reel-2', prompt: 'x', size: '1920x1080' }, param: 'size', message: /size must be one of: 720x1280, 1280x720/ },
    {
      name: 'unknown aspect ratio',
      payload: { model: 'reelOa2Plus', prompt: 'x', aspect_ratio: '4:3' },
      param: 'aspect_ratio',
      message: /aspect_ratio must be one of: 16:9, 9:16/,
    },
    {
      name: 'reference URL not http',
      payload: { model: 'reel-2', prompt: 'x', input_reference: ['file:///etc/passwd'] },
      param: 'input_reference[0]',
      message: /must be an absolute http\(s\) URL/,
    },
    {
      name: 'image_urls not an array',
      payload: { model: 'reel-2', prompt: 'x', image_urls: 'https://a/b.png' },
      param: 'image_urls',
      message: /image_urls must be an array/,
    },
  ];
  it.each(cases)('$name', async ({ payload, param, message, code }) => {
    await expect400(payload, param, message, code);
  });
  it('nothing is stored for a rejected request', async () => {
    const count = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await count();
    await post({ ...base('reelOa2Plus'), image_urls: urls(2) });
    await post({ ...base('reel-2'), duration: 25 });
    expect(await count()).toBe(before);
  });
  it('ignores unknown extra fields (D11)', async () => {
    expect((await post({ ...base('reel-2-pro'), n: 1, quality: 'hd' })).statusCode).toBe(200);
  });
});

describe('reel paths: every create path takes both forms; the form follows model', () => {
  const cases = ['/api/reel/videos', '/reel/videos', '/v1/reel/videos'].flatMap((url) => REEL_MODELS.map((model) => ({ url, model })));
  it.each(cases)('$url $model', async ({ url, model }) => {
    const res = await post(base(model), url, hp);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ object: 'video.generation', model, status: 'queued' });
    expect((await hp.store.tasks.get(body(res).id))!.form).toBe(rules(model).form);
  });
  it('the overview path applies the same rules', async () => {
    await expect400({ ...base('reelOa2'), duration: 10 }, 'duration', /duration must be one of 4, 8, 12 for reelOa2/, 'invalid_request', '/v1/reel/videos');
  });
});

describe('reel query replies on every query path, by status', () => {
  const QUERY_PATHS = (id: string) => [`/api/v1/videos/${id}`, `/v1/reel/videos/${id}`, `/v1/result/${id}`];
  const cases = REEL_MODELS.flatMap((model) => (['queued', 'completed', 'failed'] as const).map((status) => ({ model, status })));
  it.each(cases)('$model $status', async ({ model, status }) => {
    const seconds = rules(model).durations.at(-1)!;
    const id = body(await post({ ...base(model), seconds }, '/reel/videos', hp)).id as string;
    if (status !== 'queued') await finish(hp, id, status === 'completed' ? 'complete' : 'fail', seconds);
    for (const url of QUERY_PATHS(id)) {
      const res = await get(url, hp);
      expect(res.statusCode).toBe(200);
      const b = body(res);
      expect(b).toMatchObject({
        id,
        object: 'video.generation',
        model,
        status,
        created: expect.any(Number),
        progress: status === 'completed' ? 100 : expect.any(Number),
        video_url: status === 'completed' ? expect.stringMatching(/^https?:\/\/.*video\.mp4/) : null,
        error: status === 'failed' ? 'sandbox: failed on purpose' : null,
      });
      if (status === 'completed') expect(b.actualDuration).toBe(seconds);
      else expect(b).not.toHaveProperty('actualDuration');
    }
  });
  it('the reel query paths answer for a task of another family, shaped by that family (D4)', async () => {
    const pic = await hp.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { ...hp.auth(), 'content-type': 'application/json' },
      payload: { model: 'pic', prompt: 'x' },
    });
    const id = body(pic).id as string;
    for (const url of ['/api/v1/videos/', '/v1/reel/videos/']) {
      const res = await get(`${url}${id}`, hp);
      expect(res.statusCode).toBe(200);
      expect(body(res)).toMatchObject({ id, object: 'image.generation', image_url: null });
    }
  });
  it.each(['/api/v1/videos/', '/v1/reel/videos/'])("%s: another key's task and an unknown id are the same 404", async (url) => {
    const id = body(await post(base('reel-2'), '/reel/videos', hp)).id as string;
    for (const res of [await get(`${url}${id}`, hp, hp.otherKey), await get(`${url}task_doesnotexist0000000000`, hp)]) {
      expect(res.statusCode).toBe(404);
      expect(body(res).error).toMatchObject({ code: 'task_not_found', param: 'id' });
    }
  });
  it('the reel query paths need a key', async () => {
    const res = await hp.app.inject({ method: 'GET', url: '/v1/reel/videos/task_x' });
    expect(res.statusCode).toBe(401);
  });
});
