/**
 * A gateway built from providers.json with `gemini` providers in front of the fake Gemini API: a
 * pic-2 image made by a Gemini image model and re-hosted; a clip made by Veo, its result downloaded
 * with the key (through the API's redirect to storage) and re-hosted, the task completing only
 * after the operation is done; a field no candidate can honour is a 400 at submit naming it; a Veo
 * result held back by the safety filter fails the task; and a worker that dies between the create
 * and the completion never creates twice: the next worker checks the saved operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createGateway } from '../../src/main/gateway.js';
import { createGeminiProvider } from '../../src/providers/gemini/index.js';
import type { ProviderContext } from '../../src/providers/types.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { jobOf } from '../../src/tasks/task-work.js';
import { startFakeGemini, type FakeGemini } from '../fakes/gemini.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness } from '../helpers/harness.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { imageFacts, timedFacts } from '../helpers/media-facts.js';
import { downloadServed, submitJson } from '../helpers/gateway-calls.js';

const { file } = configFiles('mediagate-gemini-');
let fake: FakeGemini;
let gw: ListeningGateway;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  fake = await startFakeGemini();
  const providers = file({
    providers: { gem: { type: 'gemini', baseUrl: fake.baseUrl, apiKeyEnv: 'GEMINI_KEY', pollSeconds: 0.05, timeoutMs: 20_000 } },
    routes: {
      'pic-2': [{ provider: 'gem', model: 'gemini-3-pro-image-preview' }],
      clip_3_1_fast: [{ provider: 'gem', model: 'veo-3.1-fast-generate-preview' }],
      clip_3_1_pro: [{ provider: 'gem', model: 'veo-3.0-generate-001' }],
    },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, GEMINI_KEY: fake.apiKey } });
}, 60_000);

afterAll(async () => {
  for (const c of cleanups) await c();
  await gw?.close();
  await fake?.close();
});

const submit = submitJson;

const download = (url: string) => downloadServed(gw.origin, url);

describe('gemini in a gateway built from providers.json', () => {
  it('pic-2 16:9 2k: made by the image model (imageSize 2K) and re-hosted', async () => {
    const created = await submit(gw, '/v1/pic/images', { model: 'pic-2', prompt: 'a harbour at dawn', size: '16:9', resolution: '2k' });
    expect(created.status).toBe(200);
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('gem');
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: gw.auth() })).json();
    expect(await imageFacts(await download(query.image_url))).toMatchObject({ format: 'png', width: 2688, height: 1536 });
  });

  it('clip on Veo: completes after the operation is done, the video fetched with the key through the redirect, re-hosted', async () => {
    const creates = fake.creates();
    const created = await submit(gw, '/clip/videos', { model: 'clip_3_1_fast', prompt: 'waves on rocks', aspect_ratio: '9:16' });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json.id ?? created.json.task_id) as string;
    const task = await gw.waitForTask(id, undefined, 30_000);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(fake.creates() - creates).toBe(1);
    const downloads = fake.downloads.slice(-2);
    expect(downloads[0]!.path).toMatch(/^\/v1beta\/files\/\w+:download$/);
    expect(downloads[0]!.headers['x-goog-api-key']).toBe(fake.apiKey);
    expect(downloads[1]!.path).toMatch(/^\/storage\//);
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: gw.auth() })).json();
    const facts = timedFacts(await download(query.video_url));
    expect(facts.video).toMatchObject({ width: 720, height: 1280 });
    expect(Math.round(facts.durationSec)).toBe(8);
  });

  it('a field no candidate can honour is a 400 at submit naming it, nothing sent', async () => {
    const before = fake.calls.length;
    const res = await submit(gw, '/clip/videos', { model: 'clip_3_1_pro', prompt: 'x', resolution: '4K' });
    expect(res.status).toBe(400);
    expect(res.json.error ?? res.json).toMatchObject({ param: 'resolution' });
    expect(JSON.stringify(res.json)).toMatch(/veo-3.0-generate-001 makes 720p or 1080p/);
    expect(fake.calls.length).toBe(before);
  });

  it('a Veo result held back by the safety filter fails the task saying so', async () => {
    const created = await submit(gw, '/clip/videos', { model: 'clip_3_1_fast', prompt: 'a storm [rai]' });
    const task = await gw.waitForTask((created.json.id ?? created.json.task_id) as string, undefined, 30_000);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/blocked by the upstream's safety filters/);
  });
});

describe('gemini: a crash between the create and the completion', () => {
  it('never creates twice: the next worker checks the saved operation and completes the task', async () => {
    const provider = createGeminiProvider({ id: 'gem', baseUrl: fake.baseUrl, apiKey: fake.apiKey, pollSeconds: 0.05 });
    const routes = { clip_3_1_fast: [{ provider: 'gem', model: 'veo-3.1-fast-generate-preview', priority: 0, weight: 1 }] };
    const h = await createHarness({ providers: [provider], routes, workers: false, env: { MEDIAGATE_LEASE_SECONDS: '2' } });
    cleanups.push(() => h.close());
    const created = await submit(h, '/clip/videos', { model: 'clip_3_1_fast', prompt: 'crash window' });
    expect(created.status).toBe(200);
    const id = (created.json.id ?? created.json.task_id) as string;
    // a worker claims the task, creates the generation, saves the reference, then dies (its lease lapses)
    const claimed = (await claimNextTask(h.store.tasks, ['gem'], 'dead', 200))!;
    const creates = fake.creates();
    const ctx: ProviderContext = {
      signal: new AbortController().signal,
      log: createLogger('silent'),
      workDir: '',
      reportProgress: () => undefined,
      readMedia: async () => {
        throw new Error('no media');
      },
      mediaUrl: (r) => r.url,
    };
    const started = await provider.start(jobOf(claimed, 'gem'), ctx);
    expect(started.state).toBe('started');
    await h.store.tasks.updateIf(
      id,
      { statusIn: ['processing'], leaseOwner: 'dead' },
      {
        upstream: { generation: 0, provider: 'gem', ref: (started as { ref: { id: string } }).ref, startedAt: Date.now(), checkFailures: 0 },
        leaseOwner: 'dead',
        leaseExpiresAt: Date.now() - 1,
      },
    );
    const worker = await createGateway({ ...h.config, workers: true }, { store: h.store, providers: [provider], routes, runnerPollMs: 20 });
    cleanups.push(() => worker.runner!.stop(500));
    worker.runner!.start();
    const done = await h.waitForTask(id, undefined, 30_000);
    expect(done.status, done.error ?? '').toBe('completed');
    expect(fake.creates() - creates).toBe(1); // the dead worker's create only
    expect(done.attempts).toBe(1);
  });
});
