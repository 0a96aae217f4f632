import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveFfmpegCount } from '../src/media/ffmpeg.js';
import { claimNextTask } from '../src/tasks/states.js';
import { createHarness, waitFor, type Harness } from './helpers/harness.js';
import { body } from './helpers/json.js';

const json = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cancel = (hh: Harness, id: string) => hh.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: hh.auth() });

describe('cancelling a motion task while ffmpeg renders it (decisions.md #23)', () => {
  let h: Harness;
  beforeAll(async () => { h = await createHarness({ env: { MEDIAGATE_SANDBOX_TIMING: 'instant' } }); });
  afterAll(async () => { await h.close(); });

  it('kills ffmpeg, stays cancelled, leaves no result file, and a second cancel is a 409', async () => {
    // The longest, largest 1.5 pro render (1080p, 12 s, with audio): slow enough to catch mid-encode.
    const created = await h.app.inject({
      method: 'POST', url: '/v1/motion/videos', headers: { ...h.auth(), ...json },
      payload: JSON.stringify({
        model: 'motion_1_5_pro_1080p', content: [{ type: 'text', text: 'a red fox running through snow' }],
        ratio: '16:9', duration: 12, generate_audio: true,
      }),
    });
    expect(created.statusCode).toBe(200);
    const id = body(created).id as string;

    await waitFor(() => (h.store.tasks.get(id)?.status === 'processing' && liveFfmpegCount() > 0 ? true : undefined), 30_000, 'ffmpeg to be rendering the task');
    expect(h.runner!.inFlight).toBe(1);

    // Watch the result root: a worker that was not stopped would still store its MP4 there (and then
    // remove it, as the task is no longer its own). A stopped worker never writes anything.
    const written: string[] = [];
    const watcher = fs.watch(h.blobs.root, (_event, name) => { if (name) written.push(String(name)); });
    const progressAtCancel = h.store.tasks.get(id)!.progress;
    const cancelledAt = Date.now();
    const res = await cancel(h, id);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ id, object: 'video', model: 'motion_1_5_pro_1080p', status: 'cancelled', video_url: null, actualDuration: null, error: null });

    // The worker is told at once: ffmpeg is killed and the runner lets go of the task.
    await waitFor(() => (liveFfmpegCount() === 0 ? true : undefined), 2_000, 'ffmpeg to be killed after the cancel');
    const killedAfterMs = Date.now() - cancelledAt;
    await waitFor(() => (h.runner!.inFlight === 0 ? true : undefined), 2_000, 'the runner to stop working on the task');

    // Nothing later turns it back into something else (no late completion, retry or failure).
    await sleep(1_500);
    watcher.close();
    expect(written.filter((n) => n.startsWith(id))).toEqual([]);
    // SIGKILL takes effect at once; the whole render takes seconds.
    expect(killedAfterMs).toBeLessThan(1_000);
    expect(progressAtCancel).toBeLessThan(99);
    const stored = h.store.tasks.get(id)!;
    expect(stored).toMatchObject({ status: 'cancelled', error: null, result: null, leaseOwner: null });
    expect(liveFfmpegCount()).toBe(0);

    const q = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(q.statusCode).toBe(200);
    expect(body(q)).toMatchObject({ id, status: 'cancelled', video_url: null, actualDuration: null, error: null });

    // No result files, and the worker's scratch folder is gone too.
    expect(fs.existsSync(path.join(h.blobs.root, id))).toBe(false);
    expect(fs.readdirSync(path.join(h.dataDir, 'tmp')).filter((n) => n.startsWith(id))).toEqual([]);

    const again = await cancel(h, id);
    expect(again.statusCode).toBe(409);
    expect(body(again).error).toMatchObject({ code: 'invalid_task_state', param: 'id', message: expect.stringMatching(/is cancelled; only queued or processing/) });
    expect(h.store.tasks.get(id)!.status).toBe('cancelled');
  }, 60_000);
});

describe('cancelling a queued motion task', () => {
  let h: Harness;
  beforeAll(async () => { h = await createHarness({ workers: false }); });
  afterAll(async () => { await h.close(); });

  it('is never handed to a worker afterwards', async () => {
    const created = await h.app.inject({
      method: 'POST', url: '/v1/motion/videos', headers: { ...h.auth(), ...json },
      payload: JSON.stringify({ model: 'motion_2_0', content: [{ type: 'text', text: 'a fox' }] }),
    });
    const id = body(created).id as string;
    // Watch the result root: a worker that was not stopped would still store its MP4 there (and then
    // remove it, as the task is no longer its own). A stopped worker never writes anything.
    const written: string[] = [];
    const watcher = fs.watch(h.blobs.root, (_event, name) => { if (name) written.push(String(name)); });
    const progressAtCancel = h.store.tasks.get(id)!.progress;
    const cancelledAt = Date.now();
    const res = await cancel(h, id);
    expect(res.statusCode).toBe(200);
    expect(body(res).status).toBe('cancelled');
    expect(claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000)).toBeUndefined();
    await sleep(100);
    expect(h.store.tasks.get(id)).toMatchObject({ status: 'cancelled', attempts: 0, startedAt: null });
    const q = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(body(q)).toMatchObject({ id, status: 'cancelled', video_url: null });
  });
});
