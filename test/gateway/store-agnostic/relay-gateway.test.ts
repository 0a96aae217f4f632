/**
 * Gateway to gateway (issue 13, G94-G99): an upstream mediagate (sandbox, instant
 * timing) behind a relaying mediagate whose only provider is `relay`. Every family end to end
 * through HTTP on the relaying gateway: the outputs are what was asked (pixel sizes, durations,
 * audio), served from the relaying gateway's own origin; the upstream saw one create per task,
 * at the family's path, with `Idempotency-Key: <task id>`; renamed models reach the upstream under
 * their route name; uploaded assets are relayed as signed `/inputs/` URLs the upstream fetched.
 * Chat, motion cancel and result downloads: relay-gateway-chat, relay-cancel, relay-result-downloads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/store/types.js';
import { image, startMediaServer, type MediaServer } from '../../helpers/media-fixtures.js';
import { imageFacts, sniffContentType, timedFacts } from '../../helpers/media-facts.js';
import { callRelaying, startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';
import { downloadServed } from '../../helpers/gateway-calls.js';

let pair: RelayPair;
let media: MediaServer;
/** Every media task submitted through the relaying gateway of `pair`. */
const relayedIds: string[] = [];

beforeAll(async () => {
  media = await startMediaServer();
  pair = await startRelayPair({
    // a renamed model: callers ask for pic-2-stable, the upstream is asked for pic (both 1k)
    routes: { 'pic-2-stable': [{ provider: 'relay', priority: 0, weight: 1, model: 'pic' }] },
  });
}, 60_000);
afterAll(async () => {
  await pair?.close();
  await media?.close();
});

const call = (method: 'GET' | 'POST', path: string, body?: unknown) => callRelaying(pair, method, path, body);

/** The upstream's task made for relaying task `id` (found by the Idempotency-Key it was created with). */
async function upstreamTaskOf(id: string): Promise<TaskRecord> {
  const upstreamId = (await pair.relaying.store.tasks.get(id))?.upstream?.ref?.id;
  expect(upstreamId).toBeDefined();
  // the one create sent with Idempotency-Key <id> answered that upstream task
  const creates = pair.createsWithKey(id);
  expect(creates).toHaveLength(1);
  const answer = JSON.parse(creates[0]!.response!) as { id?: string; data?: { projectId?: string } };
  expect(answer.id ?? answer.data?.projectId).toBe(upstreamId);
  return (await pair.upstream.store.tasks.get(upstreamId!))!;
}

/** Submits through the relaying gateway, waits for the task there, and answers its query reply. */
async function relayTask(
  createPath: string,
  body: Record<string, unknown>,
  queryPath = (id: string) => `/v1/result/${id}`,
): Promise<{ id: string; query: Record<string, any> }> {
  const created = await call('POST', createPath, body);
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  const id = (created.json.id ?? created.json.data?.projectId) as string;
  relayedIds.push(id);
  const task = await pair.relaying.waitForTask(id, undefined, 90_000);
  expect(task.status, task.error ?? '').toBe('completed');
  const query = await call('GET', queryPath(id));
  expect(query.status).toBe(200);
  return { id, query: query.json };
}

/** The bytes behind a result URL, which must be on the relaying gateway's own origin. */
const download = (url: string) => downloadServed(pair.relaying.origin, url);

/** The create the upstream saw for relaying task `id`: one, with `Idempotency-Key: <id>`, at `path`. */
function expectOneCreate(id: string, path: string): Record<string, unknown> {
  const creates = pair.createsWithKey(id);
  expect(creates).toHaveLength(1);
  expect(creates[0]!.url).toBe(path);
  expect(creates[0]!.headers.authorization).toBe(`Bearer ${pair.upstream.key}`);
  expect(creates[0]!.targetStatus).toBe(200);
  return JSON.parse(creates[0]!.body) as Record<string, unknown>;
}

/** The status queries the upstream saw for relaying task `id`, all at `path` (the upstream id in it). */
async function expectQueries(id: string, path: (upstreamId: string) => string): Promise<void> {
  const upstreamId = ((await pair.relaying.store.tasks.get(id))!.upstream!.ref as { id: string }).id;
  const queries = pair.proxy.requests.filter((r) => r.method === 'GET' && r.url.includes(upstreamId) && !r.url.startsWith('/files/'));
  expect(queries.length).toBeGreaterThan(0);
  for (const q of queries) expect(q.url).toBe(path(upstreamId));
}

describe('pic through the relay', () => {
  it.each([
    ['pic', {}, 1024, 1024],
    ['pic', { size: '9:16' }, 576, 1024],
    ['pic-2', { resolution: '2k', size: '16:9' }, 2048, 1152],
    ['pic-pro', { resolution: '1k', size: '21:9' }, 1024, 439],
  ])('%s %j: a PNG of %i x %i served by the relaying gateway', async (model, fields, width, height) => {
    const { id, query } = await relayTask('/v1/pic/images', { model, prompt: 'a fox in the snow', ...fields });
    expect(query).toMatchObject({ id, object: 'image.generation', model, status: 'completed', progress: 100, error: null });
    const bytes = await download(query.image_url);
    expect(sniffContentType(bytes)).toBe('image/png');
    expect(await imageFacts(bytes)).toMatchObject({ width, height });
    const body = expectOneCreate(id, '/v1/pic/images');
    expect(body).toEqual({ model, prompt: 'a fox in the snow', ...fields });
    await expectQueries(id, (u) => `/v1/result/${u}`);
  });
});

/** ffprobe's facts of a relayed video, against what was asked. */
async function expectVideo(url: string, width: number, height: number, seconds: number, audio: boolean): Promise<void> {
  const bytes = await download(url);
  expect(sniffContentType(bytes)).toBe('video/mp4');
  const facts = timedFacts(bytes);
  expect(facts.video).toMatchObject({ width, height });
  expect(Math.abs(facts.durationSec - seconds)).toBeLessThanOrEqual(0.1);
  expect(facts.audio !== null).toBe(audio);
}

describe('video families through the relay', () => {
  it('clip Form A: created at {api_base_url}/clip/videos, queried at {power_base_url}/v1/result', async () => {
    const { id, query } = await relayTask('/clip/videos', { prompt: 'waves', aspect_ratio: '9:16' });
    expect(query).toMatchObject({ id, object: 'video.generation', model: 'clip3.1-fast', status: 'completed' });
    await expectVideo(query.video_url, 720, 1280, 8, false);
    expect(expectOneCreate(id, '/api/clip/videos')).toEqual({ model: 'clip3.1-fast', prompt: 'waves', size: '720x1280', duration: 8 });
    await expectQueries(id, (u) => `/power/v1/result/${u}`);
    expect(await upstreamTaskOf(id)).toMatchObject({ family: 'clip', form: 'A', status: 'completed' });
  });

  it('clip Form B: created at {base_url}/clip/videos, queried at {base_url}/v1/result; actualDuration passed on', async () => {
    const { id, query } = await relayTask('/clip/videos', { model: 'clip_3_1_fast', prompt: 'waves', aspect_ratio: '16:9', resolution: '720P' });
    expect(query).toMatchObject({ id, object: 'video', model: 'clip_3_1_fast', status: 'completed' });
    expect(Math.abs(query.actualDuration - 8)).toBeLessThanOrEqual(0.1);
    await expectVideo(query.video_url, 1280, 720, 8, false);
    expect(expectOneCreate(id, '/clip/videos')).toEqual({ model: 'clip_3_1_fast', prompt: 'waves', aspect_ratio: '16:9', resolution: '720p' });
    await expectQueries(id, (u) => `/v1/result/${u}`);
    expect(await upstreamTaskOf(id)).toMatchObject({ family: 'clip', form: 'B' });
  });

  it('reel Form A: created at {api_base_url}/reel/videos, queried at {api_base_url}/v1/videos', async () => {
    const { id, query } = await relayTask('/reel/videos', { model: 'reel-2', prompt: 'city', size: '1280x720', seconds: 10 }, (i) => `/v1/reel/videos/${i}`);
    expect(query).toMatchObject({ id, object: 'video.generation', model: 'reel-2', status: 'completed' });
    await expectVideo(query.video_url, 1280, 720, 10, false);
    expect(expectOneCreate(id, '/api/reel/videos')).toEqual({ model: 'reel-2', prompt: 'city', size: '1280x720', duration: 10 });
    await expectQueries(id, (u) => `/api/v1/videos/${u}`);
  });

  it('reel Form B: created at {base_url}/reel/videos', async () => {
    const { id, query } = await relayTask('/v1/reel/videos', { model: 'reelOa2Plus', prompt: 'city' });
    await expectVideo(query.video_url, 720, 1280, 4, false);
    expect(expectOneCreate(id, '/reel/videos')).toEqual({ model: 'reelOa2Plus', prompt: 'city', size: '720x1280', duration: 4 });
    await expectQueries(id, (u) => `/api/v1/videos/${u}`);
    expect(await upstreamTaskOf(id)).toMatchObject({ family: 'reel', form: 'B' });
  });

  it('motion 1.5 pro with audio: created and queried under {power_base_url}', async () => {
    const { id, query } = await relayTask(
      '/v1/motion/videos',
      { model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'a dog runs' }], duration: 4 },
      (i) => `/v1/result/${i}`,
    );
    expect(query).toMatchObject({ id, object: 'video', status: 'completed' });
    await expectVideo(query.video_url, 854, 480, 4, true);
    expect(expectOneCreate(id, '/power/v1/motion/videos')).toEqual({
      model: 'motion_1_5_pro_480p',
      content: [{ type: 'text', text: 'a dog runs' }],
      ratio: 'adaptive',
      duration: 4,
      generate_audio: true,
    });
    await expectQueries(id, (u) => `/power/v1/result/${u}`);
  });

  it('videos: the {code, msg, data: {projectId}} envelope at both ends', async () => {
    const created = await call('POST', '/v1/videos/videos', { model: 'videos_fast', prompt: 'a lake', duration: 4, ratio: '9:16' });
    expect(created.json).toMatchObject({ code: '0', msg: null, data: { projectId: expect.any(String) } });
    const id = created.json.data.projectId as string;
    relayedIds.push(id);
    expect((await pair.relaying.waitForTask(id, undefined, 90_000)).status).toBe('completed');
    const query = (await call('GET', `/v1/result/${id}`)).json;
    expect(query).toMatchObject({ id, object: 'video', model: 'videos_fast', status: 'completed' });
    await expectVideo(query.video_url, 720, 1280, 4, false);
    expect(expectOneCreate(id, '/v1/videos/videos')).toEqual({ model: 'videos_fast', prompt: 'a lake', duration: 4, ratio: '9:16', resolution: '720p' });
    // the upstream's projectId is what the relay checks
    expect((await pair.relaying.store.tasks.get(id))!.upstream!.ref!.id).toBe((await upstreamTaskOf(id)).id);
    await expectQueries(id, (u) => `/v1/result/${u}`);
  });

  it("Model Center, a video model: flat task objects, audio as the table's default", async () => {
    const { id, query } = await relayTask(
      '/v2/model-center/tasks',
      { model: 'sd_2.0_fast_discount', prompt: 'rain', duration: 4, resolution: '480p' },
      (i) => `/v2/model-center/tasks/${i}`,
    );
    expect(query).toMatchObject({ id, object: 'video', model: 'sd_2.0_fast_discount', status: 'completed' });
    expect(query.result_url).toBe(query.video_url);
    await expectVideo(query.result_url, 854, 480, 4, true);
    expect(expectOneCreate(id, '/v2/model-center/tasks')).toMatchObject({
      model: 'sd_2.0_fast_discount',
      prompt: 'rain',
      duration: 4,
      resolution: '480p',
      generate_audio: true,
    });
    await expectQueries(id, (u) => `/v2/model-center/tasks/${u}`);
  });

  it('Model Center, an image model: every field passed on', async () => {
    const { id, query } = await relayTask(
      '/v2/model-center/tasks',
      { model: 'imagegen-5.0', prompt: 'a cat', size: '640x480', style: 'ink' },
      (i) => `/v2/model-center/tasks/${i}`,
    );
    expect(query).toMatchObject({ id, object: 'image', model: 'imagegen-5.0', status: 'completed' });
    expect(query.image_url).toBe(query.result_url);
    expect(await imageFacts(await download(query.image_url))).toMatchObject({ width: 640, height: 480 });
    expect(expectOneCreate(id, '/v2/model-center/tasks')).toEqual({ model: 'imagegen-5.0', prompt: 'a cat', size: '640x480', style: 'ink' });
  });
});

describe('caller media and model names', () => {
  it('a caller URL goes to the upstream as given, and the upstream fetches it itself', async () => {
    const url = media.serve('/ref.png', await image(320, 240), 'image/png');
    const { id, query } = await relayTask('/v1/pic/images', { model: 'pic', prompt: 'with a reference', image_urls: [url] });
    expect(expectOneCreate(id, '/v1/pic/images')).toEqual({ model: 'pic', prompt: 'with a reference', image_urls: [url] });
    expect(media.requests.get('/ref.png')).toBe(2); // the relaying gateway's review, then the upstream's
    expect((await upstreamTaskOf(id)).request.media.images[0]).toMatchObject({ url, facts: { width: 320, height: 240 } });
    expect(await imageFacts(await download(query.image_url))).toMatchObject({ width: 1024, height: 1024 });
  });

  it('an uploaded asset goes as a signed /inputs/ URL of the relaying gateway, which the upstream fetched; nested fields too', async () => {
    const form = new FormData();
    form.append('file', new Blob([await image(640, 480)], { type: 'image/png' }), 'frame.png');
    const up = await fetch(`${pair.relaying.origin}/v2/model-center/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pair.relaying.key}` },
      body: form,
    });
    const asset = (await up.json()) as { id: string; status: string };
    expect(asset.status).toBe('approved');
    const ref = `assetId://${asset.id}`;

    const pic = await relayTask('/v1/pic/images', { model: 'pic', prompt: 'from an upload', image_urls: [ref] });
    const sent = expectOneCreate(pic.id, '/v1/pic/images').image_urls as string[];
    expect(sent[0]).toMatch(new RegExp(`^${pair.relaying.origin}/inputs/${pic.id}/[^?]+\\?exp=\\d+&sig=`));
    expect((await upstreamTaskOf(pic.id)).request.media.images[0]).toMatchObject({ url: sent[0], facts: { width: 640, height: 480 } });
    expect((await pair.upstream.store.tasks.get((await upstreamTaskOf(pic.id)).id))!.request.media.images[0]!.stored).toBeDefined();

    const motion = await relayTask('/v1/motion/videos', {
      model: 'motion_2_0_4s_5s',
      content: [
        { type: 'text', text: 'it moves' },
        { type: 'image_url', image_url: { url: ref } },
      ],
      duration: 2,
    });
    const content = expectOneCreate(motion.id, '/power/v1/motion/videos').content as Array<{ image_url?: { url: string } }>;
    expect(content[1]!.image_url!.url).toMatch(new RegExp(`^${pair.relaying.origin}/inputs/${motion.id}/`));
    expect((await upstreamTaskOf(motion.id)).request.media.firstFrame).toMatchObject({ field: 'content[1].image_url.url', facts: { width: 640, height: 480 } });
    // adaptive ratio from the 4:3 frame at 720p, 2 s, no audio (2.0 model)
    await expectVideo(motion.query.video_url, 960, 720, 2, false);
  });

  it("a route's model name reaches the upstream; the caller still sees its own", async () => {
    const { id, query } = await relayTask('/v1/pic/images', { model: 'pic-2-stable', prompt: 'renamed' });
    expect(query.model).toBe('pic-2-stable');
    expect(expectOneCreate(id, '/v1/pic/images')).toEqual({ model: 'pic', prompt: 'renamed' });
    expect((await upstreamTaskOf(id)).model).toBe('pic');
  });
});

describe('what the upstream saw', () => {
  it('one create per relayed task, each with Idempotency-Key <task id>, and no create without one', () => {
    expect(relayedIds.length).toBeGreaterThanOrEqual(15);
    for (const id of relayedIds) expect(pair.createsWithKey(id), id).toHaveLength(1);
    const creates = pair.proxy.requests.filter((r) => r.method === 'POST' && r.url !== '/v1/chat/completions');
    expect(creates.map((r) => r.headers['idempotency-key']).sort()).toEqual([...relayedIds].sort());
  });
});
