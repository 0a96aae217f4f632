import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { TaskRecord } from '../../src/store/types.js';
import { expiryOf } from '../../src/tasks/expiry.js';
import { sweepExpiredResults } from '../../src/tasks/retention.js';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { createHarness, type Harness, type HarnessOptions, localBlobs } from '../helpers/harness.js';
import { body } from '../helpers/json.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WORKER = 'w-retention';
const log = createLogger('silent');
const json = { 'content-type': 'application/json' };

type Family = 'pic' | 'clip' | 'reel' | 'motion' | 'videos' | 'model-center';

/** A create call per family, through the public API. */
const CREATE: Record<Family, { url: string; payload: Record<string, unknown> }> = {
  pic: { url: '/v1/pic/images', payload: { model: 'pic', prompt: 'a red fox' } },
  clip: { url: '/clip/videos', payload: { prompt: 'a red fox' } },
  reel: { url: '/reel/videos', payload: { model: 'reel-2', prompt: 'a red fox' } },
  motion: { url: '/v1/motion/videos', payload: { model: 'motion_2_0', content: [{ type: 'text', text: 'a red fox' }] } },
  videos: { url: '/v1/videos/videos', payload: { model: 'videos_fast', prompt: 'a red fox', duration: '4', ratio: '9:16' } },
  'model-center': { url: '/v2/model-center/tasks', payload: { model: 'kinetic-o3-video', prompt: 'a red fox' } },
};

/** The result file each family's task gets. */
const FILE: Record<Family, { name: string; contentType: string }> = {
  pic: { name: 'image.png', contentType: 'image/png' },
  clip: { name: 'video.mp4', contentType: 'video/mp4' },
  reel: { name: 'video.mp4', contentType: 'video/mp4' },
  motion: { name: 'video.mp4', contentType: 'video/mp4' },
  videos: { name: 'video.mp4', contentType: 'video/mp4' },
  'model-center': { name: 'video.mp4', contentType: 'video/mp4' },
};

let harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.map((x) => x.close()));
  harnesses = [];
});

/** A fresh harness per case, so a sweep only ever sees the tasks of that case. */
async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const options: HarnessOptions = { workers: false, env };
  const h = await createHarness(options);
  harnesses.push(h);
  return h;
}

async function create(h: Harness, family: Family): Promise<string> {
  const { url, payload } = CREATE[family];
  const res = await h.app.inject({ method: 'POST', url, headers: { ...h.auth(), ...json }, payload: JSON.stringify(payload) });
  expect(res.statusCode).toBe(200);
  const b = body(res);
  const id = (b.id ?? b.data?.projectId) as string;
  expect((await h.store.tasks.get(id))?.family).toBe(family);
  return id;
}

/** Claims tasks until `id` is the one claimed. */
async function claim(h: Harness, id: string): Promise<TaskRecord> {
  for (;;) {
    const t = await claimNextTask(h.store.tasks, ['sandbox'], WORKER, 60_000);
    if (!t) throw new Error(`task ${id} was not claimable`);
    if (t.id === id) return t;
  }
}

/** Creates a task of `family` through the API and completes it by hand, with a result file on disk. */
async function completed(h: Harness, family: Family, ttlHours: number): Promise<TaskRecord> {
  const id = await create(h, family);
  const task = await claim(h, id);
  const { name, contentType } = FILE[family];
  const bytes = await h.blobs.put(id, name, { data: Buffer.from('x') });
  const finishedAt = Date.now();
  const done = await completeTask(
    h.store.tasks,
    task,
    WORKER,
    { files: [{ name, contentType, bytes }], actualDuration: 4 },
    expiryOf(family, 'completed', finishedAt, ttlHours)!,
    finishedAt,
  );
  expect(done?.status).toBe('completed');
  return done!;
}

const query = (h: Harness, id: string) => h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });

/** The download URL the query reply hands out (image_url for pic, video_url for the video families). */
async function downloadUrl(h: Harness, id: string): Promise<string> {
  const q = await query(h, id);
  expect(q.statusCode).toBe(200);
  const b = body(q);
  const url = (b.image_url ?? b.video_url) as string | null;
  expect(url).toEqual(expect.stringContaining(`/files/${id}/`));
  return url!;
}

const expOf = (url: string) => Number(new URL(url).searchParams.get('exp'));
const local = (h: Harness, url: string) => url.replace(h.config.publicUrl, '');
const filesOf = (h: Harness, id: string) => fs.existsSync(path.join(localBlobs(h).root, id));

const RETENTION: Array<{ family: Family; ms: number; deletesTask: boolean }> = [
  { family: 'pic', ms: 24 * HOUR, deletesTask: false },
  { family: 'clip', ms: 24 * HOUR, deletesTask: false },
  { family: 'reel', ms: 24 * HOUR, deletesTask: false },
  { family: 'motion', ms: 7 * DAY, deletesTask: true },
  { family: 'videos', ms: 24 * HOUR, deletesTask: false },
  { family: 'model-center', ms: 24 * HOUR, deletesTask: false },
];

describe('retention per family (D20)', () => {
  it.each(RETENTION)('$family: completed results are kept $ms ms after finishing, then swept', async ({ family, ms, deletesTask }) => {
    const h = await harness();
    const task = await completed(h, family, 24);
    const id = task.id;
    expect(task.expiresAt).toBe(task.finishedAt! + ms);

    // The handed-out link expires with the retention, and works until then.
    const url = await downloadUrl(h, id);
    expect(expOf(url)).toBe(Math.floor((task.finishedAt! + ms) / 1000));
    expect((await h.app.inject({ method: 'GET', url: local(h, url) })).statusCode).toBe(200);

    // Just before expiry: nothing is removed.
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! - 1)).toBe(0);
    expect(filesOf(h, id)).toBe(true);
    expect(await h.store.tasks.get(id)).toMatchObject({ status: 'completed', expiresAt: task.expiresAt });

    // Just after: the files go; motion tasks go too, the others stay (with no expiry left).
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! + 1)).toBe(1);
    expect(filesOf(h, id)).toBe(false);
    const q = await query(h, id);
    if (deletesTask) {
      expect(await h.store.tasks.get(id)).toBeUndefined();
      expect(q.statusCode).toBe(404);
      expect(body(q).error).toMatchObject({ code: 'task_not_found' });
    } else {
      expect(await h.store.tasks.get(id)).toMatchObject({ status: 'completed', expiresAt: null });
      expect(q.statusCode).toBe(200);
      expect(body(q).status).toBe('completed');
      const dl = await h.app.inject({ method: 'GET', url: local(h, url) });
      expect([404, 403]).toContain(dl.statusCode);
      expect(['result_not_found', 'result_link_expired']).toContain(body(dl).error.code);
      // Nothing is left to sweep: a later sweep does not touch the task again.
      expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! + 365 * DAY)).toBe(0);
      expect((await h.store.tasks.get(id))?.status).toBe('completed');
    }
  });

  it('a failed motion task is deleted 7 days after it failed', async () => {
    const h = await harness();
    const id = await create(h, 'motion');
    const finishedAt = Date.now();
    const failed = await failTask(h.store.tasks, await claim(h, id), WORKER, 'boom', expiryOf('motion', 'failed', finishedAt, 24), finishedAt);
    expect(failed).toMatchObject({ status: 'failed', expiresAt: finishedAt + 7 * DAY });
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, finishedAt + 7 * DAY - 1)).toBe(0);
    expect((await h.store.tasks.get(id))?.status).toBe('failed');
    expect(body(await query(h, id))).toMatchObject({ status: 'failed', error: 'boom' });
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, finishedAt + 7 * DAY + 1)).toBe(1);
    expect(await h.store.tasks.get(id)).toBeUndefined();
    const q = await query(h, id);
    expect(q.statusCode).toBe(404);
    expect(body(q).error.code).toBe('task_not_found');
  });

  it('a cancelled motion task (cancelled through the API) is deleted 7 days after the cancel', async () => {
    const h = await harness();
    const id = await create(h, 'motion');
    const res = await h.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: h.auth() });
    expect(res.statusCode).toBe(200);
    const task = (await h.store.tasks.get(id))!;
    expect(task.status).toBe('cancelled');
    expect(task.expiresAt).toBe(task.finishedAt! + 7 * DAY);
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! - 1)).toBe(0);
    expect(body(await query(h, id)).status).toBe('cancelled');
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, task.expiresAt! + 1)).toBe(1);
    expect(await h.store.tasks.get(id)).toBeUndefined();
    const q = await query(h, id);
    expect(q.statusCode).toBe(404);
    expect(body(q).error.code).toBe('task_not_found');
  });

  it('a failed pic task has no expiry and is never swept', async () => {
    const h = await harness();
    const id = await create(h, 'pic');
    const finishedAt = Date.now();
    expect(expiryOf('pic', 'failed', finishedAt, 24)).toBeNull();
    const failed = await failTask(h.store.tasks, await claim(h, id), WORKER, 'boom', expiryOf('pic', 'failed', finishedAt, 24), finishedAt);
    expect(failed).toMatchObject({ status: 'failed', expiresAt: null });
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, 24, finishedAt + 10 * 365 * DAY)).toBe(0);
    expect(await h.store.tasks.get(id)).toMatchObject({ status: 'failed', error: 'boom' });
    const q = await query(h, id);
    expect(q.statusCode).toBe(200);
    expect(body(q)).toMatchObject({ status: 'failed', error: 'boom', image_url: null });
  });
});

describe('MEDIAGATE_VIDEOS_RESULT_TTL_HOURS', () => {
  const TTL = 48;
  const cases: Array<{ family: Family; ms: number }> = [
    { family: 'videos', ms: 48 * HOUR },
    { family: 'model-center', ms: 48 * HOUR },
    // The setting does not touch the other families.
    { family: 'pic', ms: 24 * HOUR },
    { family: 'clip', ms: 24 * HOUR },
    { family: 'reel', ms: 24 * HOUR },
    { family: 'motion', ms: 7 * DAY },
  ];

  it.each(cases)('=48: $family results are kept $ms ms', async ({ family, ms }) => {
    const h = await harness({ MEDIAGATE_VIDEOS_RESULT_TTL_HOURS: String(TTL) });
    expect(h.config.videosResultTtlHours).toBe(TTL);
    const task = await completed(h, family, TTL);
    expect(task.expiresAt).toBe(task.finishedAt! + ms);
    const url = await downloadUrl(h, task.id);
    expect(expOf(url)).toBe(Math.floor((task.finishedAt! + ms) / 1000));

    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, TTL, task.finishedAt! + ms - 1)).toBe(0);
    expect(filesOf(h, task.id)).toBe(true);
    expect(await sweepExpiredResults(h.store.tasks, h.blobs, log, TTL, task.finishedAt! + ms + 1)).toBe(1);
    expect(filesOf(h, task.id)).toBe(false);
  });

  it('a videos link is refused as expired after 48 h, not after 24 h', async () => {
    const h = await harness({ MEDIAGATE_VIDEOS_RESULT_TTL_HOURS: String(TTL) });
    const task = await completed(h, 'videos', TTL);
    const url = await downloadUrl(h, task.id);
    const u = new URL(url);
    const check = (now: number) => h.signer.verify(task.id, 'video.mp4', u.searchParams.get('exp') ?? undefined, u.searchParams.get('sig') ?? undefined, now);
    expect(check(task.finishedAt! + 24 * HOUR + 60_000)).toBe('ok');
    expect(check(task.finishedAt! + 48 * HOUR + 1_000)).toBe('expired');
  });
});
