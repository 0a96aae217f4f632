import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutputSpec } from '../../src/contract/output.js';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const submit = (payload: unknown, headers: Record<string, string> = { ...h.auth(), 'content-type': 'application/json' }) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/videos/videos',
    headers,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const base = { model: 'videos', prompt: 'a red fox runs through snow', duration: 5 };
const urls = (kind: string, n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${kind}${i}`);
const outputOf = async (id: string) => (await h.store.tasks.get(id))!.request.output as Extract<OutputSpec, { kind: 'video' }>;
const SIZES = { '16:9': { width: 1280, height: 720 }, '9:16': { width: 720, height: 1280 } } as const;
// Written out from the interface's videos table (docs/reference/api/videos.md) and the operator's price list
// (G11, src/contract/catalog.ts), not imported: a wrong list or price in src must fail here.
const VIDEOS_MODELS = ['videos', 'videos_fast'] as const;
const VIDEOS_RATIOS = ['16:9', '9:16'] as const;
/** Credits per request. */
const VIDEOS_PRICES: Record<(typeof VIDEOS_MODELS)[number], number> = { videos: 10, videos_fast: 6 };

async function expectEnvelope400(payload: unknown, message: RegExp) {
  const res = await submit(payload);
  expect(res.statusCode).toBe(400);
  expect(body(res)).toEqual({ code: '400', msg: expect.any(String), data: null });
  expect(body(res).msg).toMatch(message);
}

describe('videos create: every model x ratio x duration bound, success envelope', () => {
  const cases = VIDEOS_MODELS.flatMap((model) =>
    [undefined, ...VIDEOS_RATIOS].flatMap((ratio) => [4, 15, '4', '15', 9].map((duration) => ({ model, ratio, duration }))),
  );
  it.each(cases)('$model ratio=$ratio duration=$duration', async ({ model, ratio, duration }) => {
    const res = await submit({ ...base, model, duration, ...(ratio && { ratio }) });
    expect(res.statusCode).toBe(200);
    const b = body(res);
    expect(b).toEqual({ code: '0', msg: null, data: { projectId: expect.stringMatching(/^task_[A-Za-z0-9_-]{30}$/) } });
    const task = (await h.store.tasks.get(b.data.projectId))!;
    expect(task).toMatchObject({ family: 'videos', model, status: 'queued', amount: VIDEOS_PRICES[model] });
    const out = await outputOf(task.id);
    expect({ width: out.width, height: out.height }).toEqual(SIZES[ratio ?? '16:9']);
    expect(out.durationSec).toBe(Number(duration));
    expect(out.audio).toBe(false);
    expect(task.request.params).toMatchObject({ duration: Number(duration), ratio: ratio ?? '16:9', resolution: '720p' });
  });
});

describe('videos create: accepted media combinations', () => {
  it.each([
    ['explicit resolution 720p', { resolution: '720p' }],
    ['first + last frame', { image: 'https://example.com/a.png', lastFrameImage: 'https://example.com/b.png' }],
    ['4 reference images', { referenceImages: urls('img', 4) }],
    ['3 reference videos', { referenceVideos: urls('vid', 3) }],
    ['both reference kinds', { referenceImages: urls('img', 4), referenceVideos: urls('vid', 3) }],
    ['empty reference arrays beside frames', { image: 'https://example.com/a.png', lastFrameImage: 'https://example.com/b.png', referenceImages: [] }],
    ['prompt of exactly 1500 characters', { prompt: 'x'.repeat(1500) }],
    ['prompt of 1500 CJK characters', { prompt: '狐'.repeat(1500) }],
    ['unknown extra fields (D11)', { seed: 1, watermark: true }],
  ])('%s', async (_name, extra) => {
    const res = await submit({ ...base, ...extra });
    expect(res.statusCode).toBe(200);
    expect(body(res).code).toBe('0');
  });

  it('stores the media by role with field names', async () => {
    const res = await submit({ ...base, referenceImages: urls('img', 2), referenceVideos: urls('vid', 1) });
    const media = (await h.store.tasks.get(body(res).data.projectId))!.request.media;
    expect(media).toEqual({
      images: [
        { url: 'https://example.com/img0', field: 'referenceImages[0]' },
        { url: 'https://example.com/img1', field: 'referenceImages[1]' },
      ],
      videos: [{ url: 'https://example.com/vid0', field: 'referenceVideos[0]' }],
      audios: [],
    });
    const frames = await submit({ ...base, image: 'https://example.com/a.png', lastFrameImage: 'https://example.com/b.png' });
    expect((await h.store.tasks.get(body(frames).data.projectId))!.request.media).toMatchObject({
      firstFrame: { url: 'https://example.com/a.png', field: 'image' },
      lastFrame: { url: 'https://example.com/b.png', field: 'lastFrameImage' },
    });
  });
});

describe('videos create: every failure is the {code:"400", msg, data:null} envelope', () => {
  const { duration: _d, ...noDuration } = base;
  const { prompt: _p, ...noPrompt } = base;
  const { model: _m, ...noModel } = base;
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing duration', noDuration, /duration is required/],
    ['missing prompt', noPrompt, /prompt is required/],
    ['missing model', noModel, /model is required/],
    ['unknown model', { ...base, model: 'videos_pro' }, /model must be one of: videos, videos_fast/],
    ['empty prompt', { ...base, prompt: '' }, /prompt must not be empty/],
    ['prompt of 1501 characters', { ...base, prompt: 'x'.repeat(1501) }, /prompt must be at most 1500 characters long \(got 1501\)/],
    ['duration 3', { ...base, duration: 3 }, /duration must be an integer from 4 to 15 \(got 3\)/],
    ['duration 16', { ...base, duration: 16 }, /duration must be an integer from 4 to 15 \(got 16\)/],
    ['duration "16"', { ...base, duration: '16' }, /duration must be an integer from 4 to 15 \(got 16\)/],
    ['duration -1', { ...base, duration: -1 }, /duration must be an integer from 4 to 15/],
    ['duration 5.5', { ...base, duration: 5.5 }, /duration has the wrong type or value/],
    ['duration "five"', { ...base, duration: 'five' }, /duration has the wrong type or value/],
    ['ratio 1:1', { ...base, ratio: '1:1' }, /ratio must be one of: 16:9, 9:16/],
    ['resolution 1080p', { ...base, resolution: '1080p' }, /resolution must be one of: 720p/],
    ['image without lastFrameImage', { ...base, image: 'https://example.com/a.png' }, /image requires lastFrameImage/],
    ['lastFrameImage without image', { ...base, lastFrameImage: 'https://example.com/b.png' }, /lastFrameImage requires image/],
    [
      'frames + reference images',
      { ...base, image: 'https://e.com/a', lastFrameImage: 'https://e.com/b', referenceImages: urls('img', 1) },
      /image, lastFrameImage and referenceImages cannot be combined/,
    ],
    [
      'frames + reference videos',
      { ...base, image: 'https://e.com/a', lastFrameImage: 'https://e.com/b', referenceVideos: urls('vid', 1) },
      /image, lastFrameImage and referenceVideos cannot be combined/,
    ],
    ['5 reference images', { ...base, referenceImages: urls('img', 5) }, /referenceImages allows at most 4 items \(got 5\)/],
    ['4 reference videos', { ...base, referenceVideos: urls('vid', 4) }, /referenceVideos allows at most 3 items \(got 4\)/],
    ['reference image not a URL', { ...base, referenceImages: ['file:///etc/passwd'] }, /referenceImages\[0\] must be an absolute http\(s\) URL/],
    ['image not a URL', { ...base, image: 'a.png', lastFrameImage: 'https://e.com/b' }, /image must be an absolute http\(s\) URL/],
    ['body is an array', [], /must be a JSON object/],
    ['truncated JSON', '{"model":"videos",', /not valid JSON/],
  ];
  it.each(cases)('%s', (_name, payload, message) => expectEnvelope400(payload, message));

  it('a missing key is {code:"401"} in the same envelope', async () => {
    const res = await submit(base, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(401);
    expect(body(res)).toEqual({ code: '401', msg: expect.stringMatching(/Authorization/), data: null });
  });

  it('a body that is not JSON by content type is {code:"400"}', async () => {
    const res = await submit('model=videos', { ...h.auth(), 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(400);
    expect(body(res)).toEqual({ code: '400', msg: expect.any(String), data: null });
  });

  it('nothing is stored for a rejected request', async () => {
    const count = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await count();
    await submit(noDuration);
    expect(await count()).toBe(before);
  });
});

describe('videos query via /v1/result/{projectId}', () => {
  const query = async (id: string, key = h.key) => h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth(key) });
  const claim = async (id: string) => {
    for (;;) {
      const t = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
      if (!t) throw new Error(`task ${id} was not claimable`);
      if (t.id === id) return t;
    }
  };
  const create = async () => body(await submit({ ...base, model: 'videos_fast', duration: 7 })).data.projectId as string;

  it('queued, then processing', async () => {
    const window = openSecondsWindow();
    const id = await create();
    expect(body(await query(id))).toEqual({
      id,
      object: 'video',
      created: expect.any(Number),
      model: 'videos_fast',
      status: 'queued',
      progress: 0,
      video_url: null,
      actualDuration: null,
      error: null,
      queue_reason: null,
    });
    expectInWindow(body(await query(id)).created, window);
    await claim(id);
    expect(body(await query(id))).toMatchObject({ status: 'processing', video_url: null, actualDuration: null });
  });
  it('completed: video_url and actualDuration', async () => {
    const id = await create();
    await completeTask(
      h.store.tasks,
      await claim(id),
      'w-test',
      { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration: 7 },
      Date.now() + 1000,
    );
    const b = body(await query(id));
    expect(b).toMatchObject({ id, object: 'video', status: 'completed', progress: 100, actualDuration: 7, error: null });
    expect(b.video_url).toMatch(/^https?:\/\/.+video\.mp4/);
  });
  it('failed: error, no url', async () => {
    const id = await create();
    await failTask(h.store.tasks, await claim(id), 'w-test', 'invalid prompt', Date.now() + 1000);
    expect(body(await query(id))).toMatchObject({ status: 'failed', video_url: null, actualDuration: null, error: 'invalid prompt' });
  });
  it("another key's projectId is a 404 in the standard error body", async () => {
    const res = await query(await create(), h.otherKey);
    expect(res.statusCode).toBe(404);
    expect(body(res).error.code).toBe('task_not_found');
  });
});
