import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ffmpegPath, liveFfmpegCount } from '../../src/media/ffmpeg.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { createHarness, type Harness, localBlobs } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { body } from '../helpers/json.js';

// Every process this test file spawns, so the test can see how each ffmpeg ended: a render that
// finished exits with code 0, one that was killed ends by SIGKILL. (The same spawn, only recorded.)
const spawned = vi.hoisted(() => [] as ChildProcess[]);
vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:child_process')>();
  return {
    ...actual,
    spawn: (...args: Parameters<typeof actual.spawn>) => {
      const child = (actual.spawn as (...a: unknown[]) => ChildProcess)(...args);
      spawned.push(child);
      return child;
    },
  };
});

const json = { 'content-type': 'application/json' };

const cancel = (hh: Harness, id: string) => hh.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: hh.auth() });

/** The ffmpeg processes spawned so far. */
const ffmpegs = () => spawned.filter((c) => c.spawnfile === ffmpegPath());
const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

describe('cancelling a motion task while ffmpeg renders it (D23)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { MEDIAGATE_SANDBOX_TIMING: 'instant' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('kills ffmpeg, stays cancelled, leaves no result file, and a second cancel answers it again', async () => {
    // The longest, largest 1.5 pro render (1080p, 12 s, with audio): slow enough to catch mid-encode.
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: { ...h.auth(), ...json },
      payload: JSON.stringify({
        model: 'motion_1_5_pro_1080p',
        content: [{ type: 'text', text: 'a red fox running through snow' }],
        ratio: '16:9',
        duration: 12,
        generate_audio: true,
      }),
    });
    expect(created.statusCode).toBe(200);
    const id = body(created).id as string;

    await waitFor(
      async () => ((await h.store.tasks.get(id))?.status === 'processing' && liveFfmpegCount() > 0 ? true : undefined),
      30_000,
      'ffmpeg to be rendering the task',
    );
    expect(h.runner!.inFlight).toBe(1);

    // Anything the worker stores goes through the blob store: a worker that was not stopped would
    // store its MP4 (and then remove it, as the task is no longer its own). A stopped one stores nothing.
    const put = vi.spyOn(h.blobs, 'put');
    const atCancel = ffmpegs().filter(running);
    expect(atCancel).toHaveLength(1); // the render, mid-encode
    expect((await h.store.tasks.get(id))!.progress).toBeLessThan(99); // not done yet: there is a render to stop
    const spawnedBeforeCancel = ffmpegs().length;
    const closed = atCancel.map((c) => new Promise<void>((resolve) => c.once('close', () => resolve())));

    const res = await cancel(h, id);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({
      id,
      object: 'video',
      model: 'motion_1_5_pro_1080p',
      status: 'cancelled',
      video_url: null,
      actualDuration: null,
      error: null,
    });

    // The worker is told: the render's ffmpeg ends by SIGKILL, not by finishing (exit code 0),
    // and the runner lets go of the task. The bound only turns a hang into a failure.
    await waitFor(() => (atCancel.every((c) => !running(c)) ? true : undefined), 30_000, 'the render ffmpeg to end after the cancel');
    for (const child of atCancel) {
      expect({ exitCode: child.exitCode, signalCode: child.signalCode }).toEqual({ exitCode: null, signalCode: 'SIGKILL' });
    }
    await Promise.all(closed);
    await waitFor(() => (h.runner!.inFlight === 0 ? true : undefined), 30_000, 'the runner to stop working on the task');
    expect(liveFfmpegCount()).toBe(0);
    expect(ffmpegs()).toHaveLength(spawnedBeforeCancel); // no other render started for it

    // Nothing turns it back into something else: the runner, now idle, looks for work and for
    // lapsed leases (even an hour on), and finds nothing of it (no late completion, retry or failure).
    h.runner!.wake();
    expect(await h.runner!.recoverLapsedLeases(Date.now() + 3_600_000)).toBe(0);
    await new Promise((r) => setImmediate(r));
    await waitFor(() => (h.runner!.inFlight === 0 ? true : undefined), 30_000, 'the runner to be idle after looking for work');
    expect(put.mock.calls.filter(([taskId]) => taskId === id)).toEqual([]);
    put.mockRestore();
    const stored = (await h.store.tasks.get(id))!;
    expect(stored).toMatchObject({ status: 'cancelled', error: null, result: null, leaseOwner: null });
    expect(liveFfmpegCount()).toBe(0);

    const q = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(q.statusCode).toBe(200);
    expect(body(q)).toMatchObject({ id, status: 'cancelled', video_url: null, actualDuration: null, error: null });

    // No result files, and the worker's scratch folder is gone too.
    expect(fs.existsSync(path.join(localBlobs(h).root, id))).toBe(false);
    expect(fs.readdirSync(h.tmpDir).filter((n) => n.startsWith(id))).toEqual([]);

    const again = await cancel(h, id); // idempotent (G113): the cancelled task again
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(res.body);
    expect((await h.store.tasks.get(id))!.status).toBe('cancelled');
  }, 60_000);
});

describe('cancelling a queued motion task', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
  });
  afterAll(async () => {
    await h.close();
  });

  it('is never handed to a worker afterwards', async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: { ...h.auth(), ...json },
      payload: JSON.stringify({ model: 'motion_2_0', content: [{ type: 'text', text: 'a fox' }] }),
    });
    const id = body(created).id as string;
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
    const res = await cancel(h, id);
    expect(res.statusCode).toBe(200);
    expect(body(res).status).toBe('cancelled');
    // A worker asking for work now gets nothing: the task was the only one queued.
    expect(await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000)).toBeUndefined();
    expect(await h.store.tasks.get(id)).toMatchObject({ status: 'cancelled', attempts: 0, startedAt: null });
    const q = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(body(q)).toMatchObject({ id, status: 'cancelled', video_url: null });
  });
});
