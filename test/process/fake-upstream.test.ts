import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-root.js';
import { probeVideo } from '../helpers/probe-video.js';
import { ROOT } from '../helpers/process.js';

// bench/fake-upstream.js, run as its CLI (`node bench/fake-upstream.js`), so the benchmark's
// upstream cannot silently break: create -> queued/processing -> completed with a real MP4, the
// family shapes and error bodies, Idempotency-Key, and what /__stats counts. A slow instance
// (tasks finish in 10 minutes unless told with POST /__finish/{id}) keeps the order of events in
// the test's hands; a fast one (300 ms) shows the clock moving a task along by itself.

interface Upstream {
  url: string;
  child: ChildProcess;
}

async function startUpstream(env: Record<string, string>): Promise<Upstream> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'fake-upstream.js')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fake-upstream exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`, child };
}

const KEY = 'upstream-key';
let slow: Upstream;
let fast: Upstream;
beforeAll(async () => {
  [slow, fast] = await Promise.all([
    startUpstream({ BENCH_UPSTREAM_FINISH_MS: '600000', BENCH_UPSTREAM_KEY: KEY }),
    startUpstream({ BENCH_UPSTREAM_FINISH_MS: '300' }),
  ]);
});
afterAll(() => {
  slow?.child.kill();
  fast?.child.kill();
});

async function call(
  u: Upstream,
  method: string,
  url: string,
  o: { body?: unknown; key?: string | null; idem?: string } = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.key !== null) headers.authorization = `Bearer ${o.key ?? KEY}`;
  if (o.idem) headers['idempotency-key'] = o.idem;
  const res = await fetch(`${u.url}${url}`, { method, headers, ...(o.body !== undefined && { body: JSON.stringify(o.body) }) });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

const motionBody = (text = 'a cat') => ({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text }] });

describe('fake upstream (bench/fake-upstream.js)', () => {
  it('motion: created queued, not done before its time, completed after /__finish with a real 320x240 H.264 MP4', async () => {
    const created = await call(slow, 'POST', '/v1/motion/videos', { body: motionBody() });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'video', model: 'motion_2_0_4s_5s', status: 'queued', progress: 0, video_url: null, error: null });
    const id = created.json.id as string;
    const before = await call(slow, 'GET', `/v1/result/${id}`);
    expect(['queued', 'processing']).toContain(before.json.status);
    expect(before.json).toMatchObject({ id, video_url: null, actualDuration: null, error: null });
    expect(before.json.progress).toBeLessThan(100);
    expect((await call(slow, 'POST', `/__finish/${id}`)).json.status).toBe('completed');
    const after = await call(slow, 'GET', `/v1/result/${id}`);
    expect(after.json).toMatchObject({ id, status: 'completed', progress: 100, actualDuration: 1, error: null });
    const file = await fetch(after.json.video_url as string);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'video/mp4']);
    const dir = tempDir();
    try {
      fs.writeFileSync(path.join(dir, 'r.mp4'), Buffer.from(await file.arrayBuffer()));
      expect(probeVideo(path.join(dir, 'r.mp4'))).toMatchObject({ codec: 'h264', width: 320, height: 240 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the clock moves a task along: statuses never go back, progress never goes down, and it ends completed', async () => {
    const id = (await call(fast, 'POST', '/v1/motion/videos', { body: motionBody(), key: 'any' })).json.id as string;
    const order = ['queued', 'processing', 'completed'];
    const seen: Array<{ status: string; progress: number }> = [];
    while (seen.at(-1)?.status !== 'completed') {
      seen.push((await call(fast, 'GET', `/v1/result/${id}`, { key: 'any' })).json);
      expect(seen.length).toBeLessThan(2000);
      await new Promise((r) => setTimeout(r, 10));
    }
    for (let i = 1; i < seen.length; i++) {
      expect(order.indexOf(seen[i]!.status)).toBeGreaterThanOrEqual(order.indexOf(seen[i - 1]!.status));
      expect(seen[i]!.progress).toBeGreaterThanOrEqual(seen[i - 1]!.progress);
    }
  });

  it('videos answers its envelope and its error body; clip answers Form A or B by model; [fail] fails; motion cancels', async () => {
    const videos = await call(slow, 'POST', '/v1/videos/videos', { body: { model: 'videos', prompt: 'p', duration: 5 } });
    expect(videos.json).toEqual({ code: '0', msg: null, data: { projectId: expect.any(String) } });
    const query = await call(slow, 'GET', `/v1/result/${videos.json.data.projectId}`);
    expect(query.json).toMatchObject({ id: videos.json.data.projectId, object: 'video', model: 'videos' });
    const bad = await call(slow, 'POST', '/v1/videos/videos', { body: { model: 'videos' } });
    expect([bad.status, bad.json]).toEqual([400, { code: '400', msg: 'prompt is required', data: null }]);

    const formB = await call(slow, 'POST', '/clip/videos', { body: { model: 'clip_3_1_pro', prompt: 'p' } });
    const formA = await call(slow, 'POST', '/clip/videos', { body: { prompt: 'p' } });
    expect([formB.json.object, formA.json.object, formA.json.model]).toEqual(['video', 'video.generation', 'clip3.1-fast']);
    expect((await call(slow, 'POST', '/clip/videos', { body: { model: 'clip_3_1_pro' } })).json.error).toMatchObject({
      code: 'invalid_request',
      param: 'prompt',
    });
    expect((await call(slow, 'POST', '/v1/motion/videos', { body: { model: 'm' } })).json.error).toMatchObject({
      code: 'invalid_request',
      param: 'content',
      type: 'invalid_request_error',
    });

    const failing = (await call(slow, 'POST', '/v1/motion/videos', { body: motionBody('a cat [fail]') })).json.id;
    await call(slow, 'POST', `/__finish/${failing}`);
    expect((await call(slow, 'GET', `/v1/result/${failing}`)).json).toMatchObject({
      status: 'failed',
      video_url: null,
      error: expect.stringContaining('[fail]'),
    });

    const cancelled = (await call(slow, 'POST', '/v1/motion/videos', { body: motionBody() })).json.id;
    expect((await call(slow, 'POST', `/v1/motion/videos/${cancelled}/cancel`)).json.status).toBe('cancelled');
    expect((await call(slow, 'GET', `/v1/result/${cancelled}`)).json.status).toBe('cancelled');
    expect((await call(slow, 'POST', `/v1/motion/videos/${cancelled}/cancel`)).status).toBe(409);
  });

  it('needs the bearer key; an unknown id is a 404', async () => {
    expect((await call(slow, 'POST', '/v1/motion/videos', { body: motionBody(), key: null })).json.error.code).toBe('missing_api_key');
    expect((await call(slow, 'POST', '/v1/motion/videos', { body: motionBody(), key: 'wrong' })).status).toBe(401);
    expect((await call(slow, 'GET', '/v1/result/nope')).json.error.code).toBe('task_not_found');
  });

  it('Idempotency-Key: a repeat answers the same task, is counted, and the key on another path is a 409', async () => {
    const first = await call(fast, 'POST', '/v1/motion/videos', { body: motionBody(), idem: 'task_x', key: 'k1' });
    const again = await call(fast, 'POST', '/v1/motion/videos', { body: motionBody(), idem: 'task_x', key: 'k1' });
    const next = await call(fast, 'POST', '/v1/motion/videos', { body: motionBody(), idem: 'task_x.2', key: 'k1' });
    const otherKey = await call(fast, 'POST', '/v1/motion/videos', { body: motionBody(), idem: 'task_x', key: 'k2' });
    expect(again.json.id).toBe(first.json.id);
    expect([first.headers.get('idempotent-replayed'), again.headers.get('idempotent-replayed')]).toEqual([null, 'true']);
    expect(new Set([first.json.id, next.json.id, otherKey.json.id]).size).toBe(3);
    const conflict = await call(fast, 'POST', '/v1/videos/videos', { body: { model: 'videos', prompt: 'p' }, idem: 'task_x', key: 'k1' });
    expect([conflict.status, conflict.json.code]).toEqual([409, '409']);
    const stats = (await call(fast, 'GET', '/__stats?tasks=1')).json;
    expect(stats).toMatchObject({ duplicateCreates: 1, tasksCreatedMoreThanOnce: 1, conflicts: 1 });
    expect(stats.perTask.find((t: any) => t.id === first.json.id).creates).toBe(2);
  });

  it('/__stats: creates, queries before and after the finish, and the first query that saw it finished', async () => {
    const u = await startUpstream({ BENCH_UPSTREAM_FINISH_MS: '600000' });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await call(u, 'POST', '/v1/motion/videos', { body: motionBody() })).json.id);
      await call(u, 'GET', `/v1/result/${ids[0]}`);
      await call(u, 'GET', `/v1/result/${ids[0]}`);
      await call(u, 'GET', `/v1/result/${ids[1]}`);
      await call(u, 'POST', `/__finish/${ids[0]}`);
      await call(u, 'POST', `/__finish/${ids[2]}`);
      await call(u, 'GET', `/v1/result/${ids[0]}`);
      await call(u, 'GET', `/v1/result/${ids[0]}`);
      await call(u, 'GET', '/v1/result/unknown');
      const stats = (await call(u, 'GET', '/__stats?tasks=1')).json;
      expect(stats).toMatchObject({
        tasks: 3,
        finished: 2,
        creates: 3,
        duplicateCreates: 0,
        queries: { total: 5, beforeFinish: 3, afterFinish: 2, unknownIds: 1, perTask: { count: 3, min: 0, max: 4 }, intervalMs: { count: 3 } },
        finishSeen: { count: 1, unseen: 1 },
      });
      expect(stats.finishSeen.max).toBeGreaterThanOrEqual(0);
      const first = stats.perTask.find((t: any) => t.id === ids[0]);
      const fromFinish = first.queriesFromFinishMs as number[];
      expect(fromFinish.map((ms) => Math.sign(ms) >= 0)).toEqual([false, false, true, true]);
      expect(first.seenFinishedAfterMs).toBe(fromFinish[2]);
    } finally {
      u.child.kill();
    }
  });
});
