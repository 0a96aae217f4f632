/**
 * `replicate` providers in real gateways, against the fake predictions API: a gateway built from
 * providers.json (the documented `models` mapping) completes pic-2 on flux-schnell and a clip with a
 * first frame on a version, each result re-hosted at once by the gateway (its probed size what the
 * model made); a request the mapping cannot honour is a 400 at submit naming the field, nothing
 * created; a result file already deleted when re-hosted (Replicate's hour) starts a new prediction;
 * 402 at the first candidate fails over to the second. A worker that dies after the create, once
 * the prediction id is saved, is followed by another that checks that prediction: one create.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createReplicateProvider } from '../../src/providers/replicate/index.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { jobOf } from '../../src/tasks/task-work.js';
import { PAYMENT_REQUIRED, startFakeReplicate, VIDEO_VERSION, type FakeReplicate } from '../fakes/replicate.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness } from '../helpers/harness.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { image, startMediaServer, type MediaServer } from '../helpers/media-fixtures.js';
import { imageFacts, sniffContentType } from '../helpers/media-facts.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';
import { submitJson } from '../helpers/gateway-calls.js';

const { file } = configFiles('mediagate-replicate-');
let main: FakeReplicate;
let backup: FakeReplicate;
let media: MediaServer;
let gw: ListeningGateway;

beforeAll(async () => {
  [main, backup, media] = await Promise.all([startFakeReplicate(), startFakeReplicate(), startMediaServer()]);
  const providers = file({
    providers: {
      rep: { type: 'replicate', baseUrl: main.baseUrl, apiKeyEnv: 'REP_KEY', pollSeconds: 0.05, timeoutMs: 20_000, models: REPLICATE_MODELS },
      backup: { type: 'replicate', baseUrl: backup.baseUrl, apiKeyEnv: 'BACKUP_KEY', pollSeconds: 0.05, models: REPLICATE_MODELS },
    },
    routes: {
      'pic-2': [
        { provider: 'rep', model: 'flux-schnell' },
        { provider: 'backup', model: 'flux-schnell' },
      ],
      clip_3_1_fast: [{ provider: 'rep', model: 'video-01' }],
    },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, REP_KEY: main.apiKey, BACKUP_KEY: backup.apiKey } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([main?.close(), backup?.close(), media?.close()]);
});

const submit = (url: string, payload: Record<string, unknown>) => submitJson(gw, url, payload);
const createsOf = (fake: FakeReplicate, prompt: string) => fake.creates.filter((c) => c.input.prompt === prompt);

describe('replicate in a gateway built from providers.json', () => {
  it('pic-2 16:9 on flux-schnell: one prediction, its PNG re-hosted by the gateway at the size the model made', async () => {
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a harbour at dawn', size: '16:9' });
    expect(created.status).toBe(200);
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('rep');
    const [made] = createsOf(main, 'a harbour at dawn');
    expect(createsOf(main, 'a harbour at dawn')).toHaveLength(1);
    expect(made!.input).toEqual({ prompt: 'a harbour at dawn', aspect_ratio: '16:9', output_format: 'png', num_outputs: 1, go_fast: true });
    expect(made!.webhook).toBeUndefined(); // provider callbacks are off: no webhook asked for (G157)
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: gw.auth() })).json();
    expect(query.image_url.startsWith(`${gw.origin}/files/`), query.image_url).toBe(true);
    const bytes = Buffer.from(await (await fetch(query.image_url)).arrayBuffer());
    expect(sniffContentType(bytes)).toBe('image/png');
    // flux-schnell at 1 megapixel, 16:9, sides multiples of 16 (the fake's rule)
    expect(await imageFacts(bytes)).toMatchObject({ width: 1360, height: 768 });
    // re-hosted: the gateway's copy stays when Replicate deletes its file
    main.expireFiles();
    expect((await fetch(query.image_url)).status).toBe(200);
  });

  it("a clip with a first frame on a version: the caller's frame URL sent as first_frame_image, the video re-hosted", async () => {
    const frame = media.serve('/first.png', await image(320, 180, 'png'), 'image/png');
    const created = await submit('/clip/videos', { model: 'clip_3_1_fast', prompt: 'the tide comes in', first_image: frame });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json.id ?? created.json.task_id ?? created.json.data?.task_id) as string;
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const [made] = createsOf(main, 'the tide comes in');
    expect(made!.version).toBe(VIDEO_VERSION);
    expect(made!.input).toMatchObject({ prompt: 'the tide comes in', duration: 8, first_frame_image: frame, prompt_optimizer: false });
    expect(task.result?.files[0]).toMatchObject({ contentType: 'video/mp4' });
  });

  it('a resolution the mapping does not list: a 400 at submit naming it, no prediction', async () => {
    const before = main.creates.length + backup.creates.length;
    const res = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'x', resolution: '2k' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'resolution' });
    expect(res.json.error.message).toMatch(/resolution 2k: black-forest-labs\/flux-schnell takes 1k here/);
    expect(main.creates.length + backup.creates.length).toBe(before);
  });

  it('a result file already deleted when re-hosted (404): a new prediction is made, and its file re-hosted', async () => {
    main.loseFilesOfNext(1);
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a lost file' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(createsOf(main, 'a lost file')).toHaveLength(2);
    expect(task.upstream?.generation).toBe(1);
  });

  it("402 (no credit) at the first candidate is the channel's fault: the task completes at the second", async () => {
    main.script(PAYMENT_REQUIRED);
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a quiet bay' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('backup');
    expect(createsOf(main, 'a quiet bay')).toHaveLength(0);
    expect(createsOf(backup, 'a quiet bay')).toHaveLength(1);
  });
});

describe('replicate: a crash between the create and the result', () => {
  it('a worker that dies once the prediction id is saved is followed by one that checks it: one create', async () => {
    const provider = createReplicateProvider({ id: 'rep', baseUrl: main.baseUrl, apiKey: main.apiKey, models: REPLICATE_MODELS as never, pollSeconds: 0.05 });
    const routes = { 'pic-2': [{ provider: 'rep', priority: 0, weight: 1, model: 'flux-schnell' }] };
    const h = await createHarness({ providers: [provider], routes, workers: false, env: { MEDIAGATE_LEASE_SECONDS: '2' } });
    try {
      const id = (
        await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic-2', prompt: 'after the crash' } })
      ).json().id as string;
      // the "dead" worker claims the task, creates the prediction, saves its id, and is killed
      const claimed = (await claimNextTask(h.store.tasks, ['rep'], 'dead', 200))!;
      const started = await provider.start(jobOf(claimed, 'rep'), { signal: new AbortController().signal, log: createLogger('silent') } as never);
      if (started.state !== 'started') throw new Error('expected a started prediction');
      await h.store.tasks.updateIf(
        id,
        { statusIn: ['processing'], leaseOwner: 'dead' },
        {
          upstream: { generation: 0, provider: 'rep', ref: started.ref, startedAt: Date.now(), checkFailures: 0 },
          leaseOwner: 'dead',
          leaseExpiresAt: Date.now() - 1,
        },
      );
      expect(main.predictions.get(started.ref.id)!.looks).toBe(0);
      const { createGateway } = await import('../../src/main/gateway.js');
      const worker = await createGateway({ ...h.config, workers: true }, { store: h.store, providers: [provider], routes, runnerPollMs: 20 });
      worker.runner!.start();
      try {
        const done = await h.waitForTask(id);
        expect(done.status, done.error ?? '').toBe('completed');
        expect(createsOf(main, 'after the crash')).toHaveLength(1);
        expect(main.predictions.get(started.ref.id)!.status).toBe('succeeded');
        expect(done.attempts).toBe(1);
      } finally {
        await worker.runner!.stop(500);
      }
    } finally {
      await h.close(); // closes the provider too
    }
  });
});
