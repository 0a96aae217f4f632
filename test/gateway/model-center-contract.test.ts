import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskResult } from '../../src/store/types.js';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

// Written out from the interface's Model Center tables (docs/reference/api/model-center.md: the group
// table, the parameter table of the three specified models, the media rules), D17-D19, G6/G32-G34 and the operator's
// price list (G11; slug ids and prices as published in src/contract/model-center-catalog.ts),
// not imported: a wrong id, bound or price in src must fail here.
const mc = (id: string, kind: 'image' | 'video', credits: number, displayNames: string[] = []) => ({ id, kind, credits, displayNames });
const MODEL_CENTER_MODELS = [
  mc('imagegen_5.0Pro', 'image', 4, ['Imagegen 5.0 Pro']),
  mc('imagegen-5.0', 'image', 2, ['Imagegen 5.0']),
  mc('sd_2.5_discount_v1', 'video', 20),
  mc('sd_2.5_special_v1', 'video', 20),
  mc('sd_2.0_fast_special', 'video', 12),
  mc('sd_2.0_mini_special', 'video', 8),
  mc('sd_2.0_special', 'video', 15),
  mc('sd_2.0_discount', 'video', 12),
  mc('sd_2.0_fast_discount', 'video', 10),
  mc('sd_2.0_mini_discount', 'video', 6),
  mc('motion 1.5_pro', 'video', 15),
  mc('vidmodel-H3-768p-c1', 'video', 12),
  mc('video_30_10_10', 'video', 10),
  mc('videos_10_0_0-720p', 'video', 10),
  mc('videos_900_720p-c1', 'video', 10),
  mc('studio-1.0-i2v', 'video', 10, ['Studio 1.0 Image-to-Video']),
  mc('studio-1.0-r2v', 'video', 10, ['Studio 1.0 Reference-to-Video']),
  mc('studio-1.0-t2v', 'video', 10, ['Studio 1.0 Text-to-Video']),
  mc('studio-1.1-i2v', 'video', 12, ['Studio 1.1 Image-to-Video']),
  mc('studio-1.1-r2v', 'video', 12, ['Studio 1.1 Reference-to-Video']),
  mc('studio-1.1-t2v', 'video', 12, ['Studio 1.1 Text-to-Video']),
  mc('studio-1.1-v2-i2v', 'video', 14, ['Studio 1.1 v2 Image To Video']),
  mc('studio-1.1-v2-reference-raw-video', 'video', 14, ['Studio 1.1 v2 Reference Raw Video']),
  mc('studio-1.1-v2-t2v', 'video', 14, ['Studio 1.1 v2 Text To Video']),
  mc('gen-2.7-editvideo', 'video', 15, ['Gen2.7 Editvideo']),
  mc('gen-2.7-i2v', 'video', 15, ['Gen2.7 image To Video']),
  mc('gen-2.7-reference-raw-video', 'video', 15, ['Gen2.7 Reference Raw Video']),
  mc('gen-2.7-t2v', 'video', 15, ['Gen2.7 Text To Video']),
  mc('gen3.0-prime-r2v', 'video', 20),
  mc('gen3.0-r2v', 'video', 15),
  mc('kinetic-o3-video', 'video', 20, ['Kinetic O3 Video Generation']),
];
const SD_ASPECT_RATIOS = ['16:9', '9:16', '1:1', 'adaptive', '4:3', '3:4', '21:9'] as const;
/** `sd_2.0_mini_special` reference image names, canonical first (D18). */
const SD_IMAGE_ALIASES = ['reference_images', 'image_urls', 'referenceImages', 'images'] as const;
interface SdSpec {
  maxImages: number;
  maxVideos: number;
  maxAudios: number;
  duration: { min: number; max: number; default: number };
  resolutions: readonly string[];
  watermark: boolean;
  imageFields: readonly string[];
}
const SD_MODELS: Record<string, SdSpec> = {
  'sd_2.0_fast_discount': {
    maxImages: 9,
    maxVideos: 3,
    maxAudios: 3,
    duration: { min: 4, max: 15, default: 5 },
    resolutions: ['480p', '720p'],
    watermark: true,
    imageFields: ['reference_images'],
  },
  'sd_2.0_mini_special': {
    maxImages: 9,
    maxVideos: 3,
    maxAudios: 3,
    duration: { min: 4, max: 15, default: 5 },
    resolutions: ['720p'],
    watermark: false,
    imageFields: SD_IMAGE_ALIASES,
  },
  'sd_2.5_special_v1': {
    maxImages: 30,
    maxVideos: 10,
    maxAudios: 10,
    duration: { min: 4, max: 30, default: 4 },
    resolutions: ['720p', '1080p'],
    watermark: false,
    imageFields: ['reference_images'],
  },
};
/** Video pixel sizes (D19; other ratios keep the short side, sides even, G6); `adaptive` plans 16:9 until an image gives its aspect. */
const VIDEO_SIZES: Record<string, [number, number]> = {
  '720p 16:9': [1280, 720],
  '720p 9:16': [720, 1280],
  '720p 1:1': [720, 720],
  '720p 4:3': [960, 720],
  '720p 3:4': [720, 960],
  '720p 21:9': [1680, 720],
  '480p 16:9': [854, 480],
  '1080p 16:9': [1920, 1080],
  '1080p 9:16': [1080, 1920],
  '4k 16:9': [3840, 2160],
};
/** The planned output of a video task: its pixel size, length, 24 fps (G6), audio track or not. */
function videoOutput(resolution: string, aspect: string, durationSec: number, audio: boolean) {
  const r = resolution.toLowerCase();
  const [width, height] = VIDEO_SIZES[`${r} ${aspect === 'adaptive' ? '16:9' : aspect}`]!;
  return { kind: 'video', width, height, durationSec, fps: 24, audio, ...(aspect === 'adaptive' && { adaptiveResolution: r }) };
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const URL = '/v2/model-center/tasks';
const submit = (payload: unknown, key?: string) =>
  h.app.inject({
    method: 'POST',
    url: URL,
    headers: { ...h.auth(key), 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const urls = (n: number, ext = 'png') => Array.from({ length: n }, (_, i) => `https://example.com/${i}.${ext}`);
const stored = async (id: string) =>
  (await h.store.tasks.get(id))!.request as { params: Record<string, any>; output: Record<string, any>; media: Record<string, any> };
const SD_IDS = Object.keys(SD_MODELS);

async function ok(payload: Record<string, unknown>) {
  const res = await submit(payload);
  expect(res.statusCode, res.body).toBe(200);
  return body(res);
}
async function bad(payload: unknown, param: string | null, message: RegExp, code = 'invalid_request') {
  const res = await submit(payload);
  expect(res.statusCode, res.body).toBe(400);
  const err = body(res).error;
  expect(err).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
  expect(err.message).toMatch(message);
}

describe('model center create: every published Model ID is accepted', () => {
  it.each(MODEL_CENTER_MODELS.map((m) => ({ ...m })))('$id ($kind)', async ({ id, kind, credits }) => {
    const window = openSecondsWindow();
    const b = await ok({ model: id, prompt: 'a red fox' });
    const urlField = kind === 'image' ? 'image_url' : 'video_url';
    const other = kind === 'image' ? 'video_url' : 'image_url';
    expect(b).toEqual({
      id: expect.stringMatching(/^task_/),
      object: kind,
      created: expect.any(Number),
      model: id,
      status: 'queued',
      progress: 0,
      result_url: null,
      [urlField]: null,
      amount: credits,
      actualDuration: null,
      error: null,
      queue_reason: null,
    });
    expect(b).not.toHaveProperty(other);
    expectInWindow(b.created, window);
    expect((await stored(b.id)).output.kind).toBe(kind);
  });
});

describe('model center create: model must be a Model ID (D17)', () => {
  const display = MODEL_CENTER_MODELS.flatMap((m) => m.displayNames.map((name) => ({ name, id: m.id })));
  it.each(display)('display name "$name" -> 400 naming $id', async ({ name, id }) => {
    await bad({ model: name, prompt: 'x' }, 'model', new RegExp(`display name.*"${id.replace(/\./g, '\\.')}"`), 'unknown_model');
  });
  it.each([
    ['sd-2.0-fast-discount', 'sd_2.0_fast_discount'],
    ['SD_2.5_SPECIAL_V1', 'sd_2.5_special_v1'],
    ['kinetic o3 video generation', 'kinetic-o3-video'],
    ['sd_2.0_fast_discont', 'sd_2.0_fast_discount'], // a letter dropped (G485)
    ['kinetik-o3-vido', 'kinetic-o3-video'], // one changed, one dropped
  ])('near spelling %s -> 400 naming %s', async (name, id) => {
    await bad({ model: name, prompt: 'x' }, 'model', new RegExp(`"${id.replace(/\./g, '\\.')}"`), 'unknown_model');
  });
  it('an unknown id is a 400 listing the ids', async () => {
    await bad({ model: 'nope', prompt: 'x' }, 'model', /not a published Model ID; use one of: imagegen_5\.0Pro, /, 'unknown_model');
    const message = body(await submit({ model: 'nope', prompt: 'x' })).error.message as string;
    for (const m of MODEL_CENTER_MODELS) expect(message).toContain(m.id);
  });
  it('a name two letters away from two ids, or short, names none of them (the list instead)', async () => {
    await bad({ model: 'sd_2.0_fast', prompt: 'x' }, 'model', /not a published Model ID; use one of/, 'unknown_model');
    await bad({ model: 'gen', prompt: 'x' }, 'model', /not a published Model ID; use one of/, 'unknown_model');
  });
  it('a model of another family is unknown here', async () => {
    await bad({ model: 'pic', prompt: 'x' }, 'model', /not a published Model ID/, 'unknown_model');
  });
  it('the model is checked before the rest of the body', async () => {
    await bad({ model: 'Kinetic O3 Video Generation' }, 'model', /kinetic-o3-video/, 'unknown_model');
  });
  it('missing model / wrong type / missing prompt', async () => {
    await bad({ prompt: 'x' }, 'model', /model is required/);
    await bad({ model: 3, prompt: 'x' }, 'model', /model must be a string/);
    await bad({ model: 'kinetic-o3-video' }, 'prompt', /prompt is required/);
    await bad({ model: 'imagegen-5.0', prompt: '' }, 'prompt', /prompt must not be empty/);
    await bad([], null, /must be a JSON object/, 'invalid_json');
  });
});

describe.each(SD_IDS)('%s: table defaults, enums and bounds', (id) => {
  const spec = SD_MODELS[id]!;
  const imagesField = spec.imageFields[0]!;

  it('applies every default and plans the default output', async () => {
    const b = await ok({ model: id, prompt: 'x' });
    const p = (await stored(b.id)).params;
    expect(p).toMatchObject({
      prompt: 'x',
      reference_images: [],
      reference_videos: [],
      reference_audios: [],
      duration: spec.duration.default,
      aspect_ratio: '16:9',
      resolution: '720p',
      seed: -1,
      first_image: [],
      last_image: [],
      generate_audio: true,
    });
    if (spec.watermark) expect(p.watermark).toBe(false);
    else expect(p).not.toHaveProperty('watermark');
    expect((await stored(b.id)).output).toEqual(videoOutput('720p', '16:9', spec.duration.default, true));
  });

  it.each([...SD_ASPECT_RATIOS])('aspect_ratio %s', async (aspect) => {
    const b = await ok({ model: id, prompt: 'x', aspect_ratio: aspect });
    expect((await stored(b.id)).output).toEqual(videoOutput('720p', aspect, spec.duration.default, true));
  });
  it('rejects another aspect_ratio', async () => {
    await bad({ model: id, prompt: 'x', aspect_ratio: '2:1' }, 'aspect_ratio', /aspect_ratio must be one of: 16:9, 9:16, 1:1, adaptive/);
  });

  it.each(['480p', '720p', '1080p', '4K', '720P'].map((r) => ({ r, allowed: spec.resolutions.includes(r) })))(
    'resolution $r allowed=$allowed',
    async ({ r, allowed }) => {
      if (!allowed)
        return bad({ model: id, prompt: 'x', resolution: r }, 'resolution', new RegExp(`resolution must be one of: ${spec.resolutions.join(', ')}`));
      const b = await ok({ model: id, prompt: 'x', resolution: r, generate_audio: false });
      expect((await stored(b.id)).output).toEqual(videoOutput(r, '16:9', spec.duration.default, false));
    },
  );

  const { min, max } = spec.duration;
  it.each([min, max, String(min), String(max), '5', 5].map((d) => ({ d })))('duration $d accepted', async ({ d }) => {
    const b = await ok({ model: id, prompt: 'x', duration: d });
    expect((await stored(b.id)).params.duration).toBe(Number(d));
    expect((await stored(b.id)).output.durationSec).toBe(Number(d));
  });
  it.each([min - 1, max + 1, String(max + 1), '0', -1].map((d) => ({ d })))('duration $d rejected', async ({ d }) => {
    await bad({ model: id, prompt: 'x', duration: d }, 'duration', new RegExp(`duration must be an integer from ${min} to ${max} for ${id}`));
  });
  it.each([5.5, 'five', true].map((d) => ({ d })))('duration of the wrong type $d', async ({ d }) => {
    await bad({ model: id, prompt: 'x', duration: d }, 'duration', /duration has the wrong type or value/);
  });

  it('counts: reference images, videos, audios at and past their bounds', async () => {
    await ok({ model: id, prompt: 'x', [imagesField]: urls(spec.maxImages) });
    await bad(
      { model: id, prompt: 'x', [imagesField]: urls(spec.maxImages + 1) },
      imagesField,
      new RegExp(`at most ${spec.maxImages} items \\(got ${spec.maxImages + 1}\\)`),
    );
    await ok({ model: id, prompt: 'x', reference_videos: urls(spec.maxVideos, 'mp4') });
    await bad({ model: id, prompt: 'x', reference_videos: urls(spec.maxVideos + 1, 'mp4') }, 'reference_videos', new RegExp(`at most ${spec.maxVideos} items`));
    await ok({ model: id, prompt: 'x', reference_images: urls(1), reference_audios: urls(spec.maxAudios, 'mp3') });
    await bad(
      { model: id, prompt: 'x', reference_images: urls(1), reference_audios: urls(spec.maxAudios + 1, 'mp3') },
      'reference_audios',
      new RegExp(`at most ${spec.maxAudios} items`),
    );
  });
  it('counts: first_image and last_image hold 0-1 item', async () => {
    await ok({ model: id, prompt: 'x', first_image: [] });
    await ok({ model: id, prompt: 'x', first_image: urls(1), last_image: urls(1) });
    await bad({ model: id, prompt: 'x', first_image: urls(2) }, 'first_image', /at most 1 items/);
    await bad({ model: id, prompt: 'x', first_image: urls(1), last_image: urls(2) }, 'last_image', /at most 1 items/);
    await bad({ model: id, prompt: 'x', first_image: 'https://example.com/a.png' }, 'first_image', /first_image must be an array/);
  });

  it('seed: integer from -1, default -1', async () => {
    expect((await stored((await ok({ model: id, prompt: 'x', seed: 42 })).id)).params.seed).toBe(42);
    await bad({ model: id, prompt: 'x', seed: -2 }, 'seed', /seed must be >= -1/);
    await bad({ model: id, prompt: 'x', seed: '5' }, 'seed', /seed must be an integer/);
  });
  it('generate_audio: boolean, planned audio track follows it', async () => {
    expect((await stored((await ok({ model: id, prompt: 'x', generate_audio: false })).id)).output.audio).toBe(false);
    await bad({ model: id, prompt: 'x', generate_audio: 'yes' }, 'generate_audio', /generate_audio must be true or false/);
  });
  it('tools: array of objects passed on', async () => {
    const tools = [{ type: 'web_search', options: { depth: 2 } }];
    expect((await stored((await ok({ model: id, prompt: 'x', tools })).id)).params.tools).toEqual(tools);
    await bad({ model: id, prompt: 'x', tools: ['search'] }, 'tools[0]', /tools\[0\] must be an object/);
  });
  it(`watermark is ${spec.watermark ? 'a boolean' : 'not supported'}`, async () => {
    if (spec.watermark) {
      expect((await stored((await ok({ model: id, prompt: 'x', watermark: true })).id)).params.watermark).toBe(true);
      return bad({ model: id, prompt: 'x', watermark: 'no' }, 'watermark', /watermark must be true or false/);
    }
    return bad({ model: id, prompt: 'x', watermark: false }, 'watermark', new RegExp(`watermark is not supported by ${id}`));
  });

  it('prompt: the motion rule (500 CJK characters, 1000 words)', async () => {
    await ok({ model: id, prompt: '猫'.repeat(500) });
    await bad({ model: id, prompt: '猫'.repeat(501) }, 'prompt', /prompt is too long: at most 500/);
    await ok({ model: id, prompt: 'fox '.repeat(1000) });
    await bad({ model: id, prompt: 'fox '.repeat(1001) }, 'prompt', /prompt is too long: at most 1000 words/);
    await bad({ model: id, prompt: 'f'.repeat(20_001) }, 'prompt', /prompt is too long: at most 20000 characters are allowed \(got 20001\)/);
  });

  it('scenarios cannot be mixed; last_image requires first_image', async () => {
    const mixes: Array<[Record<string, unknown>, RegExp]> = [
      [{ first_image: urls(1), reference_images: urls(1) }, /first_image and reference_images cannot be combined/],
      [{ first_image: urls(1), last_image: urls(1), reference_videos: urls(1, 'mp4') }, /first_image, last_image and reference_videos cannot be combined/],
      [{ first_image: urls(1), reference_images: urls(1), reference_audios: urls(1, 'mp3') }, /cannot be combined/],
    ];
    for (const [fields, message] of mixes) {
      const res = await submit({ model: id, prompt: 'x', ...fields });
      expect(res.statusCode).toBe(400);
      expect(body(res).error).toMatchObject({ code: 'exclusive_fields', message: expect.stringMatching(message) });
    }
    await bad({ model: id, prompt: 'x', last_image: urls(1) }, 'last_image', /last_image requires first_image/);
    await bad({ model: id, prompt: 'x', first_image: [], last_image: urls(1) }, 'last_image', /last_image requires first_image/);
    await ok({ model: id, prompt: 'x', first_image: urls(1), reference_images: [] });
  });

  it('audio needs at least 1 reference image or video', async () => {
    await bad({ model: id, prompt: 'x', reference_audios: urls(1, 'mp3') }, 'reference_audios', /needs at least 1 reference image or video/);
    await ok({ model: id, prompt: 'x', reference_videos: urls(1, 'mp4'), reference_audios: urls(1, 'mp3') });
  });

  it('plans media by role with field names', async () => {
    const b = await ok({ model: id, prompt: 'x', reference_images: urls(2), reference_videos: urls(1, 'mp4'), reference_audios: urls(1, 'mp3') });
    expect((await stored(b.id)).media).toEqual({
      images: [
        { url: urls(2)[0], field: 'reference_images[0]' },
        { url: urls(2)[1], field: 'reference_images[1]' },
      ],
      videos: [{ url: urls(1, 'mp4')[0], field: 'reference_videos[0]' }],
      audios: [{ url: urls(1, 'mp3')[0], field: 'reference_audios[0]' }],
    });
    const f = await ok({ model: id, prompt: 'x', first_image: urls(1), last_image: ['https://example.com/last.png'] });
    expect((await stored(f.id)).media).toMatchObject({
      firstFrame: { field: 'first_image[0]' },
      lastFrame: { url: 'https://example.com/last.png', field: 'last_image[0]' },
    });
  });

  it('passes unknown fields on (D11)', async () => {
    const b = await ok({ model: id, prompt: 'x', camera_fixed: true, extra: { a: [1] } });
    expect((await stored(b.id)).params).toMatchObject({ camera_fixed: true, extra: { a: [1] } });
    expect((await stored(b.id)).params).not.toHaveProperty('model');
  });
});

describe('sd_2.0_mini_special reference image aliases (D18)', () => {
  const id = 'sd_2.0_mini_special';
  it.each([...SD_IMAGE_ALIASES])('%s alone is stored as reference_images', async (alias) => {
    const b = await ok({ model: id, prompt: 'x', [alias]: urls(9) });
    expect((await stored(b.id)).params.reference_images).toEqual(urls(9));
    if (alias !== 'reference_images') expect((await stored(b.id)).params).not.toHaveProperty(alias);
    expect((await stored(b.id)).media.images[8]).toEqual({ url: urls(9)[8], field: `${alias}[8]` });
    await bad({ model: id, prompt: 'x', [alias]: urls(10) }, alias, /at most 9 items/);
  });
  const pairs = SD_IMAGE_ALIASES.flatMap((a, i) => SD_IMAGE_ALIASES.slice(i + 1).map((b) => [a, b] as const));
  it.each(pairs)('%s + %s -> 400 naming both', async (a, b) => {
    const res = await submit({ model: id, prompt: 'x', [a]: urls(1), [b]: urls(1) });
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toMatchObject({ code: 'exclusive_fields', param: `${a},${b}`, message: expect.stringContaining(`${a} and ${b}`) });
  });
  it('an alias counts as reference images in the scenario rules', async () => {
    await ok({ model: id, prompt: 'x', images: urls(1), reference_audios: urls(1, 'mp3') });
    const res = await submit({ model: id, prompt: 'x', referenceImages: urls(1), first_image: urls(1) });
    expect(body(res).error).toMatchObject({ code: 'exclusive_fields', message: expect.stringMatching(/first_image and referenceImages cannot be combined/) });
  });
  it.each(['sd_2.0_fast_discount', 'sd_2.5_special_v1'])('the aliases are not fields of %s', async (other) => {
    await bad({ model: other, prompt: 'x', image_urls: urls(1) }, 'image_urls', /image_urls is not a field of .*send reference images as reference_images/);
  });
});

describe('models whose parameters are not shown', () => {
  it('pass every other field on unchanged (D11)', async () => {
    const payload = { model: 'kinetic-o3-video', prompt: 'x', duration: '7', mode: 'pro', nested: { a: [1, 'b'] }, cfg_scale: 0.5, image_urls: urls(1) };
    const b = await ok(payload);
    const { model: _m, ...rest } = payload;
    expect((await stored(b.id)).params).toEqual(rest);
    expect((await stored(b.id)).media.images).toEqual([{ url: urls(1)[0], field: 'image_urls[0]' }]);
  });
  it('video: default output 720p 16:9 5 s without audio', async () => {
    expect((await stored((await ok({ model: 'studio-1.0-t2v', prompt: 'x' })).id)).output).toEqual(videoOutput('720p', '16:9', 5, false));
  });
  it('video: output follows resolution, aspect_ratio, duration and generate_audio', async () => {
    const b = await ok({ model: 'gen3.0-r2v', prompt: 'x', resolution: '1080p', aspect_ratio: '9:16', duration: '8', generate_audio: true });
    expect((await stored(b.id)).output).toEqual(videoOutput('1080p', '9:16', 8, true));
    expect((await stored(b.id)).params.duration).toBe('8');
  });
  it.each([
    [{ resolution: '768p' }, 'resolution', /resolution must be one of: 480p, 720p, 1080p, 4K/],
    [{ aspect_ratio: '2:1' }, 'aspect_ratio', /aspect_ratio must be one of/],
    [{ duration: 0 }, 'duration', /duration must be an integer from 1 to 60/],
    [{ duration: 61 }, 'duration', /duration must be an integer from 1 to 60/],
    [{ duration: 'long' }, 'duration', /duration has the wrong type/],
    [{ generate_audio: 'yes' }, 'generate_audio', /must be true or false/],
    [{ resolution: 720 }, 'resolution', /resolution must be a string/],
  ] as const)('video: %j -> 400', async (fields, param, message) => {
    await bad({ model: 'vidmodel-H3-768p-c1', prompt: 'x', ...fields }, param, message);
  });
  it.each([
    [{}, 1024, 1024],
    [{ size: '1024x1536' }, 1024, 1536],
    [{ aspect_ratio: '16:9', resolution: '2k' }, 2048, 1152],
    [{ size: '3:4' }, 768, 1024],
    [{ resolution: '4K' }, 4096, 4096],
    [{ size: '16:9', aspect_ratio: '1:1', resolution: '1k' }, 1024, 1024], // aspect_ratio before size's ratio
    [{ size: '512x512', aspect_ratio: '16:9', resolution: '4k' }, 512, 512], // pixels win
  ] as const)('imagegen: %j -> %dx%d png', async (fields, width, height) => {
    const b = await ok({ model: 'imagegen_5.0Pro', prompt: 'x', ...fields });
    expect((await stored(b.id)).output).toEqual({ kind: 'image', format: 'png', width, height });
  });
  it.each([
    [
      { size: 'large' },
      'size',
      /^size must be WxH pixels, each 64 to 4096 \(such as 1536x1024\), or a ratio W:H from 1:4 to 4:1 \(such as 16:9\) \(got "large"\)$/,
    ],
    [{ size: '9000x10' }, 'size', /size must be WxH pixels, each 64 to 4096 .* \(got "9000x10"\)$/],
    [{ size: '63x64' }, 'size', /\(got "63x64"\)$/],
    [{ size: '1:10', resolution: '4k' }, 'size', /\(got "1:10"\)$/],
    [{ size: 7 }, 'size', /^size must be a string \(got number\)$/],
    [{ resolution: '8k' }, 'resolution', /^resolution must be one of: 1k, 2k, 4k \(got "8k"\)$/],
    [{ aspect_ratio: 'bogus' }, 'aspect_ratio', /^aspect_ratio must be a ratio W:H from 1:4 to 4:1, such as 16:9 \(got "bogus"\)$/],
  ] as const)('imagegen: %j -> 400 naming %s', async (fields, param, message) => {
    await bad({ model: 'imagegen_5.0Pro', prompt: 'x', ...fields }, param, message);
  });
  it.each([
    [{ image_urls: 'https://example.com/a.png' }, 'image_urls', /image_urls must be an array/],
    [{ reference_images: ['ftp://example.com/a.png'] }, 'reference_images[0]', /must be an absolute http\(s\) URL or assetId:\/\/\{id\}/],
    [{ reference_videos: ['assetId://a b'] }, 'reference_videos[0]', /must be an absolute http\(s\) URL or assetId:\/\/\{id\}/],
    [{ first_image: [1] }, 'first_image[0]', /must be a string/],
    [{ reference_audios: {} }, 'reference_audios', /must be an array/],
  ] as const)('media fields: %j -> 400', async (fields, param, message) => {
    await bad({ model: 'gen-2.7-editvideo', prompt: 'x', ...fields }, param, message);
  });
  it('nothing is stored for a rejected request', async () => {
    const count = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await count();
    await submit({ model: 'sd_2.0_fast_discount', prompt: 'x', duration: 99 });
    await submit({ model: 'Studio 1.0 Image-to-Video', prompt: 'x' });
    expect(await count()).toBe(before);
  });
});

describe('model center query', () => {
  let q: Harness;
  beforeAll(async () => {
    q = await createHarness({ workers: false, reviewMedia: false });
  });
  afterAll(async () => {
    await q.close();
  });
  const create = async (payload: Record<string, unknown>) => body(await q.app.inject({ method: 'POST', url: URL, headers: q.auth(), payload }));
  const get = (id: string, key?: string, path = `${URL}/${id}`) => q.app.inject({ method: 'GET', url: path, headers: q.auth(key) });
  /** Claims queued tasks (oldest first) until this one is processing. */
  const claim = async (id: string) => {
    for (;;) {
      const task = (await claimNextTask(q.store.tasks, ['sandbox'], 'w1', 60_000))!;
      if (task.id === id) return task;
    }
  };
  const finish = async (id: string, result: TaskResult) => (await completeTask(q.store.tasks, await claim(id), 'w1', result, Date.now() + 3_600_000))!;

  it('a queued task answers with the create shape; other keys and unknown ids get 404', async () => {
    const created = await create({ model: 'sd_2.0_fast_discount', prompt: 'x' });
    const res = await get(created.id);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual(created);
    for (const r of [await get(created.id, q.otherKey), await get('task_doesnotexist')]) {
      expect(r.statusCode).toBe(404);
      expect(body(r).error.code).toBe('task_not_found');
    }
  });

  it('a completed video task has result_url = video_url and actualDuration; where a re-hosted result came from is never shown (G88)', async () => {
    const created = await create({ model: 'sd_2.0_fast_discount', prompt: 'x' });
    await finish(created.id, {
      files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }],
      actualDuration: 5,
      sourceUrls: ['https://up.example/v.mp4'],
    });
    const b = body(await get(created.id));
    expect(b).toMatchObject({ id: created.id, object: 'video', status: 'completed', progress: 100, actualDuration: 5, amount: 10, error: null });
    expect(b).not.toHaveProperty('upstream_url');
    expect(b).not.toHaveProperty('upstream_urls');
    expect(JSON.stringify(b)).not.toContain('up.example');
    expect(b.result_url).toMatch(/^https?:\/\/.+video\.mp4/);
    expect(b.video_url).toBe(b.result_url);
    expect(body(await get(created.id, undefined, `/v1/result/${created.id}`))).toEqual(b);
  });

  it('a completed video task without upstream URLs has no upstream fields', async () => {
    const created = await create({ model: 'kinetic-o3-video', prompt: 'x' });
    await finish(created.id, { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration: 5 });
    const b = body(await get(created.id));
    expect(b).not.toHaveProperty('upstream_url');
    expect(b).not.toHaveProperty('upstream_urls');
    expect(b.video_url).toEqual(expect.any(String));
  });

  it('a completed imagegen task answers with object image and image_url', async () => {
    const created = await create({ model: 'imagegen-5.0', prompt: 'x' });
    await finish(created.id, { files: [{ name: 'image.png', contentType: 'image/png', bytes: 1 }] });
    const b = body(await get(created.id));
    expect(b).toMatchObject({ object: 'image', status: 'completed', actualDuration: null, error: null });
    expect(b.image_url).toMatch(/image\.png/);
    expect(b.result_url).toBe(b.image_url);
    expect(b).not.toHaveProperty('video_url');
  });

  it('a failed task carries its error and null URLs', async () => {
    const created = await create({ model: 'sd_2.5_special_v1', prompt: 'x' });
    await failTask(q.store.tasks, await claim(created.id), 'w1', 'sandbox: boom', null);
    expect(body(await get(created.id))).toMatchObject({ status: 'failed', error: 'sandbox: boom', result_url: null, video_url: null, actualDuration: null });
  });
});
