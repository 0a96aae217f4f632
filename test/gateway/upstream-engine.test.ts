/**
 * The engine for generations at an upstream (G86-G92), with a scripted in-memory
 * provider: the reference is saved before anything else, checks are queue entries (no slot held
 * between them), a worker that dies never starts a generation twice, result files are downloaded
 * into the gateway's storage, failures are classified, channels fail over and their circuits open.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ChannelError,
  UnrecoverableError,
  type CheckResult,
  type MediaProvider,
  type Provider,
  type ProviderJob,
  type RemoteFile,
} from '../../src/providers/types.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { jobOf } from '../../src/tasks/task-work.js';
import { createHarness, type Harness, type HarnessOptions } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { image } from '../helpers/media-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A tiny file server standing in for an upstream's result storage. */
async function fileServer(): Promise<{
  url(path: string): string;
  files: Map<string, { body: Buffer; type: string }>;
  hits: string[];
  headers: http.IncomingHttpHeaders[];
}> {
  const files = new Map<string, { body: Buffer; type: string }>();
  const hits: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url!);
    headers.push(req.headers);
    const f = files.get(req.url!);
    if (!f) {
      res.writeHead(404).end('gone');
      return;
    }
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: (p) => `${base}${p}`, files, hits, headers };
}

interface Generation {
  job: ProviderJob;
  checks: number;
  cancelled: boolean;
}

/**
 * An upstream as a provider: `start` makes a generation (keyed like an Idempotency-Key: the same
 * task and generation number give the same one back), `check` answers from `script`.
 */
function scriptedUpstream(
  id: string,
  script: (g: Generation) => CheckResult | Promise<CheckResult>,
  options: { refuse?: () => ChannelError | undefined; families?: Provider['capabilities']['families']; pollSeconds?: number } = {},
) {
  const generations = new Map<string, Generation>();
  const creates: string[] = [];
  const provider: MediaProvider = {
    id,
    capabilities: { families: options.families ?? ['pic', 'clip'] },
    pollSeconds: options.pollSeconds ?? 0.05,
    async start(job) {
      const refusal = options.refuse?.();
      if (refusal) throw refusal;
      const key = job.generation === 0 ? job.taskId : `${job.taskId}.${job.generation}`;
      creates.push(key);
      if (!generations.has(key)) generations.set(key, { job, checks: 0, cancelled: false });
      return { state: 'started', ref: { id: `up_${key}`, data: { key } }, progress: 1 };
    },
    async check(ref) {
      const g = generations.get(ref.data!.key as string)!;
      g.checks++;
      return script(g);
    },
    async cancel(ref) {
      generations.get(ref.data!.key as string)!.cancelled = true;
    },
  };
  return { provider, generations, creates };
}

async function harness(options: HarnessOptions): Promise<Harness> {
  const h = await createHarness(options);
  cleanups.push(() => h.close());
  return h;
}

const submitPic = (h: Harness, prompt = 'a fox') =>
  h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt } });

describe('generations at an upstream', () => {
  it('the reference is saved, checks wait as queue entries, the result is downloaded and served by the gateway', async () => {
    const files = await fileServer();
    files.files.set('/out/1.png', { body: await image(64, 64), type: 'image/png' });
    const up = scriptedUpstream('up', (g) =>
      g.checks < 3
        ? { state: 'pending', progress: g.checks * 30 }
        : {
            state: 'completed',
            output: { files: [{ url: files.url('/out/1.png'), kind: 'image', headers: { authorization: 'Bearer upstream-secret' } } satisfies RemoteFile] },
          },
    );
    const h = await harness({ providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] } });
    const res = await submitPic(h);
    expect(res.statusCode).toBe(200);
    const id = res.json().id as string;
    const waiting = await waitFor(
      async () => {
        const t = await h.store.tasks.get(id);
        return t?.upstream?.ref ? t : undefined;
      },
      5000,
      'the reference saved',
    );
    expect(waiting).toMatchObject({ status: 'processing', provider: 'up', upstream: { generation: 0, provider: 'up', ref: { id: `up_${id}` } } });
    const done = await h.waitForTask(id);
    expect(done.status).toBe('completed');
    expect(up.creates).toEqual([id]);
    expect(up.generations.get(id)!.checks).toBe(3);
    expect(done.attempts).toBe(1);
    // the upstream URL stays on the task; the caller gets the gateway's own URL of the same bytes
    expect(done.result!.sourceUrls).toEqual([files.url('/out/1.png')]);
    expect(files.headers[0]!.authorization).toBe('Bearer upstream-secret');
    const query = (await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() })).json();
    expect(query.image_url).toMatch(/^http:\/\/localhost:\d+\/files\//);
    expect(JSON.stringify(query)).not.toContain(files.url(''));
    const file = await h.app.inject({ method: 'GET', url: new URL(query.image_url).pathname + new URL(query.image_url).search });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(await image(64, 64))).toBe(true);
    expect(done.result!.files[0]).toMatchObject({ contentType: 'image/png', width: 64, height: 64 });
  });

  it('between checks a task holds no worker slot: more tasks wait at the upstream than the worker has slots', async () => {
    let release = false;
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    // checks 1 s apart: at 50 ms, the started tasks' checks kept both slots busy on a loaded machine and the last starts waited behind them
    const up = scriptedUpstream(
      'up',
      () => (release ? { state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'image' }] } } : { state: 'pending' }),
      { pollSeconds: 1 },
    );
    const h = await harness({
      providers: [up.provider],
      routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] },
      env: { MEDIAGATE_WORKER_CONCURRENCY: '2' },
    });
    const ids = await Promise.all(Array.from({ length: 12 }, async (_, i) => (await submitPic(h, `p${i}`)).json().id as string));
    await waitFor(
      async () => ((await Promise.all(ids.map((id) => h.store.tasks.get(id)))).every((t) => t?.upstream?.ref) ? true : undefined),
      // held slots would never let all 12 start while the upstream answers pending
      15_000,
      'all 12 started with 2 slots',
    );
    expect(up.creates.length).toBe(12);
    release = true;
    for (const id of ids) expect((await h.waitForTask(id)).status).toBe('completed');
  });

  it('a start gets a scratch folder; a check only a reserved path (G127); neither outlives its work', async () => {
    const files = await fileServer();
    files.files.set('/w.png', { body: await image(32, 32), type: 'image/png' });
    const seen: Array<{ step: string; dir: string; existed: boolean }> = [];
    const provider: MediaProvider = {
      id: 'up',
      capabilities: { families: ['pic'] },
      pollSeconds: 0.05,
      async start(_job, ctx) {
        seen.push({ step: 'start', dir: ctx.workDir, existed: fs.existsSync(ctx.workDir) });
        return { state: 'started', ref: { id: 'up_1' } };
      },
      async check(_ref, _job, ctx) {
        seen.push({ step: 'check', dir: ctx.workDir, existed: fs.existsSync(ctx.workDir) });
        if (seen.length < 3) return { state: 'pending' };
        await fs.promises.mkdir(ctx.workDir, { recursive: true }); // a provider that writes there makes it
        await fs.promises.writeFile(path.join(ctx.workDir, 'scratch'), 'x');
        return { state: 'completed', output: { files: [{ url: files.url('/w.png'), kind: 'image' }] } };
      },
    };
    const h = await harness({ providers: [provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] } });
    const done = await h.waitForTask((await submitPic(h)).json().id as string);
    expect(done.status).toBe('completed');
    expect(seen.map((s) => [s.step, s.existed])).toEqual([
      ['start', true],
      ['check', false],
      ['check', false],
    ]);
    expect(new Set(seen.map((s) => s.dir)).size).toBe(3);
    await waitFor(() => (seen.every((s) => !fs.existsSync(s.dir)) ? true : undefined), 5000, 'every scratch folder removed');
  });

  it('a worker that dies after the start never starts the generation again: the next one checks the saved reference', async () => {
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    const up = scriptedUpstream('up', () => ({ state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'image' }] } }));
    const h = await harness({
      providers: [up.provider],
      routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] },
      workers: false,
      env: { MEDIAGATE_LEASE_SECONDS: '2' },
    });
    const id = (await submitPic(h)).json().id as string;
    // a "dead" worker claims the task, starts the generation, saves the reference, then a check
    // claim of its own lapses (kill -9 in the middle of a check)
    const claimed = (await claimNextTask(h.store.tasks, ['up'], 'dead', 200))!;
    const started = await up.provider.start(jobOf(claimed, 'up'), undefined as never);
    expect(started.state).toBe('started');
    await h.store.tasks.updateIf(
      id,
      { statusIn: ['processing'], leaseOwner: 'dead' },
      {
        upstream: {
          generation: 0,
          provider: 'up',
          ref: (started as { ref: { id: string; data: Record<string, unknown> } }).ref,
          startedAt: Date.now(),
          checkFailures: 0,
        },
        leaseOwner: 'dead',
        leaseExpiresAt: Date.now() - 1,
      },
    );
    const { createGateway } = await import('../../src/main/gateway.js');
    const worker = await createGateway(
      { ...h.config, workers: true },
      { store: h.store, providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] }, runnerPollMs: 20 },
    );
    cleanups.push(() => worker.runner!.stop(500));
    worker.runner!.start();
    const done = await h.waitForTask(id);
    expect(done.status).toBe('completed');
    expect(up.creates).toEqual([id]); // one create: the dead worker's
    expect(done.attempts).toBe(1); // a lapsed check costs no attempt
  });

  it("checks that fail back off and are retried; the upstream's Retry-After is honoured; the task completes", async () => {
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    const checkedAt: number[] = [];
    let holdSecond = true;
    const up = scriptedUpstream('up', (g) => {
      checkedAt.push(Date.now());
      if (g.checks === 1) throw new ChannelError('upstream answered 503', { retryAfterMs: 400 });
      if (g.checks === 2) throw new Error('socket hang up');
      return { state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'image' }] } };
    });
    const h = await harness({ providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] } });
    const id = (await submitPic(h)).json().id as string;
    // after the first (refused) check: the next is scheduled no sooner than the upstream asked
    const waiting = await waitFor(
      async () => {
        const t = await h.store.tasks.get(id);
        return t?.upstream?.checkFailures === 1 && holdSecond ? t : undefined;
      },
      5000,
      'the first failed check',
    );
    holdSecond = false;
    expect(waiting.runAfter).toBeGreaterThanOrEqual(checkedAt[0]! + 400);
    expect(waiting).toMatchObject({ status: 'processing', leaseOwner: null, attempts: 1 });
    const done = await h.waitForTask(id);
    expect(done).toMatchObject({ status: 'completed', attempts: 1 });
    expect(checkedAt).toHaveLength(3);
    expect(up.creates).toEqual([id]);
  });

  it('a failed generation starts a new one under a new idempotency key; an unrecoverable one fails the task with its reason', async () => {
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    const up = scriptedUpstream('up', (g) => {
      if (g.job.family === 'pic' && g.job.params.prompt === 'refused')
        return { state: 'failed', error: new UnrecoverableError('prompt: the upstream refused it (content policy)', { param: 'prompt' }) };
      return g.job.generation === 0
        ? { state: 'failed', error: new Error('the upstream generation failed: internal error') }
        : { state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'image' }] } };
    });
    const h = await harness({ providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] }, backoffScale: 0.05 }); // a new generation's delay is not the point (G278)
    const id = (await submitPic(h)).json().id as string;
    const refused = (await submitPic(h, 'refused')).json().id as string;
    expect((await h.waitForTask(id)).status).toBe('completed');
    expect(up.creates).toEqual(expect.arrayContaining([id, `${id}.1`]));
    const failed = await h.waitForTask(refused);
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('prompt: the upstream refused it (content policy)') });
    expect(up.creates.filter((k) => k.startsWith(refused))).toEqual([refused]);
  });

  it('a result that is not what was asked fails the task clearly; a result gone (404) makes a new generation while attempts remain', async () => {
    const files = await fileServer();
    files.files.set('/page.html', { body: Buffer.from('<html>not an image</html>'), type: 'text/html' });
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    const up = scriptedUpstream('up', (g) => {
      if (g.job.family === 'pic' && g.job.params.prompt === 'html')
        return { state: 'completed', output: { files: [{ url: files.url('/page.html'), kind: 'image' }] } };
      return { state: 'completed', output: { files: [{ url: files.url(g.job.generation === 0 ? '/missing.png' : '/r.png'), kind: 'image' }] } };
    });
    const h = await harness({
      providers: [up.provider],
      routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] },
      env: { MEDIAGATE_MAX_ATTEMPTS: '2' },
      backoffScale: 0.05,
    });
    const html = (await submitPic(h, 'html')).json().id as string;
    const gone = (await submitPic(h, 'gone')).json().id as string;
    const bad = await h.waitForTask(html);
    expect(bad).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining("the upstream's result is not an image") });
    expect(up.creates.filter((k) => k.startsWith(html))).toEqual([html]);
    const regenerated = await h.waitForTask(gone);
    expect(regenerated).toMatchObject({ status: 'completed', attempts: 2 });
    expect(up.creates.filter((k) => k.startsWith(gone))).toEqual([gone, `${gone}.1`]);
  });

  it('a cancel reaches the upstream, the task is cancelled at once, and a late completion is ignored', async () => {
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    let finish = false;
    const up = scriptedUpstream(
      'up',
      () => (finish ? { state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'video' }] } } : { state: 'pending', progress: 10 }),
      { families: ['motion'] },
    );
    const h = await harness({ providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] } });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: h.auth(),
      payload: { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'x' }] },
    });
    expect(res.statusCode).toBe(200);
    const id = res.json().id as string;
    await waitFor(async () => ((await h.store.tasks.get(id))?.upstream?.ref ? true : undefined), 5000, 'started');
    const cancel = await h.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: h.auth() });
    expect(cancel.statusCode).toBe(200);
    expect((await h.store.tasks.get(id))!.status).toBe('cancelled');
    await waitFor(() => (up.generations.get(id)?.cancelled ? true : undefined), 5000, 'the upstream cancel');
    finish = true;
    await new Promise((r) => setTimeout(r, 300));
    expect((await h.store.tasks.get(id))!.status).toBe('cancelled');
    expect(files.hits).toEqual([]);
  });
});

describe('channels: failover and circuits', () => {
  it('a refusing first channel hands the create to the next; its circuit opens after repeated faults, and closes once it recovers', async () => {
    const files = await fileServer();
    files.files.set('/r.png', { body: await image(32, 32), type: 'image/png' });
    const completed = (): CheckResult => ({ state: 'completed', output: { files: [{ url: files.url('/r.png'), kind: 'image' }] } });
    let down = true;
    const first = scriptedUpstream('first', completed, { refuse: () => (down ? new ChannelError('upstream answered 503') : undefined) });
    const second = scriptedUpstream('second', completed);
    const h = await harness({
      providers: [first.provider, second.provider],
      routes: {
        '*': [
          { provider: 'first', priority: 0, weight: 1 },
          { provider: 'second', priority: 1, weight: 1 },
        ],
      },
      breaker: { failuresToOpen: 5, openMs: 300, maxOpenMs: 300 },
    });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = (await submitPic(h, `t${i}`)).json().id as string;
      ids.push(id);
      expect((await h.waitForTask(id)).status).toBe('completed');
    }
    expect(second.creates).toEqual(ids);
    expect(first.creates).toEqual([]);
    expect(h.gateway.channels.state('first')).toBe('open');
    // the checks stayed with the channel that accepted
    expect((await h.store.tasks.get(ids[0]!))!.upstream?.provider).toBe('second');
    // recovered: once the open period ends, a probe goes through and closes the circuit
    down = false;
    const after: string[] = [];
    await waitFor(
      async () => {
        const id = (await submitPic(h, 'after')).json().id as string;
        after.push(id);
        await h.waitForTask(id);
        return first.creates.length > 0 ? true : undefined;
      },
      10_000,
      'a probe to reach the first channel again',
    );
    expect(first.creates).toEqual([after.at(-1)]);
    expect(h.gateway.channels.state('first')).toBe('closed');
  });

  it('when no channel takes calls, submit is a 503 upstream_unavailable with Retry-After, naming no upstream', async () => {
    const up = scriptedUpstream('up', () => ({ state: 'pending' }), { refuse: () => new ChannelError('connect ECONNREFUSED 10.0.0.7:443') });
    const h = await harness({ providers: [up.provider], routes: { '*': [{ provider: 'up', priority: 0, weight: 1 }] } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submitPic(h, `t${i}`)).json().id as string);
    await waitFor(() => (h.gateway.channels.state('up') === 'open' ? true : undefined), 10_000, 'the circuit to open');
    const refused = await submitPic(h, 'more');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json().error).toMatchObject({ code: 'upstream_unavailable', type: 'upstream_error' });
    expect(refused.body).not.toMatch(/10\.0\.0\.7|ECONNREFUSED/);
    // the accepted tasks wait without using attempts: a claim under way when the circuit opened
    // (processing, attempt 1 for a moment) is refused by the channel and hands its attempt back
    await waitFor(
      async () => {
        const tasks = await Promise.all(ids.map((id) => h.store.tasks.get(id)));
        return tasks.every((t) => t?.status === 'queued' && t.attempts === 0) ? true : undefined;
      },
      10_000,
      'every accepted task queued again, no attempt used',
    );
  });
});
