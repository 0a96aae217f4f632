/**
 * fal in gateways built from providers.json, in front of fake fal queues: a pic and a clip task
 * complete with their files re-hosted by the gateway (fetched from the fake's CDN, probed); a
 * request no candidate's mapping can honour is a 400 at submit naming the field; an exhausted
 * balance at the first candidate fails over to the second; a model's refusal shown only on the
 * result fails the task; and a gateway that stops after fal accepted a request is followed by a
 * second gateway on the same store that checks the saved request and never submits it again.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../src/auth/keys.js';
import { loadConfig } from '../../../src/config.js';
import { createGateway, type Gateway } from '../../../src/main/gateway.js';
import { openSqliteStore } from '../../../src/store/sqlite/open.js';
import { FAL_MODELS } from '../../helpers/fal-mapping.js';
import { exhaustedBalance, startFakeFal, type FakeFal } from '../../fakes/fal.js';
import { configFiles } from '../../helpers/config-files.js';
import { tempDir } from '../../helpers/temp-root.js';
import { waitFor } from '../../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { imageFacts, sniffContentType } from '../../helpers/media-facts.js';
import { image, startMediaServer, type MediaServer } from '../../helpers/media-fixtures.js';
import { downloadServed, submitJson } from '../../helpers/gateway-calls.js';

const { file } = configFiles('mediagate-fal-');
let main: FakeFal;
let backup: FakeFal;
let media: MediaServer;
let gw: ListeningGateway;

const providersFile = (mainUrl: string, backupUrl: string) =>
  file({
    providers: {
      fal: { type: 'fal', baseUrl: mainUrl, apiKeyEnv: 'FAL_KEY', pollSeconds: 0.05, models: FAL_MODELS },
      falBackup: { type: 'fal', baseUrl: backupUrl, apiKeyEnv: 'FAL_BACKUP_KEY', pollSeconds: 0.05, models: FAL_MODELS },
    },
    routes: {
      pic: [
        { provider: 'fal', model: 'fal-ai/flux/dev' },
        { provider: 'falBackup', model: 'fal-ai/flux/dev' },
      ],
      clip_3_1_fast: [{ provider: 'fal', model: 'fal-ai/veo3/image-to-video' }],
    },
  });

beforeAll(async () => {
  [main, backup, media] = await Promise.all([startFakeFal(), startFakeFal(), startMediaServer()]);
  gw = await listeningGateway({
    env: { MEDIAGATE_PROVIDERS: providersFile(main.baseUrl, backup.baseUrl), FAL_KEY: main.apiKey, FAL_BACKUP_KEY: backup.apiKey },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([main?.close(), backup?.close(), media?.close()]);
});

const submit = (url: string, payload: Record<string, unknown>) => submitJson(gw, url, payload);

const download = (url: string) => downloadServed(gw.origin, url);

describe('fal in a gateway built from providers.json', () => {
  it('pic 16:9: submitted to flux as landscape_16_9, the image re-hosted by the gateway', async () => {
    const created = await submit('/v1/pic/images', { model: 'pic', prompt: 'a harbour [queue:2]', size: '16:9' });
    expect(created.status).toBe(200);
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('fal');
    expect(main.submits.at(-1)).toMatchObject({
      model: 'fal-ai/flux/dev',
      input: { prompt: 'a harbour [queue:2]', image_size: 'landscape_16_9', num_images: 1 },
    });
    expect(main.submits.at(-1)?.webhook).toBeUndefined(); // provider callbacks are off: no fal_webhook (G157)
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: gw.auth() })).json();
    const bytes = await download(query.image_url);
    expect(sniffContentType(bytes)).toBe('image/png');
    expect(await imageFacts(bytes)).toMatchObject({ width: 1024, height: 576 });
    expect(JSON.stringify(query)).not.toContain(main.baseUrl);
  });

  it('clip with a first frame: the model with a sub-path followed by the returned URLs, the video re-hosted', async () => {
    const frame = media.serve('/first.png', await image(320, 180), 'image/png');
    const created = await submit('/clip/videos', { model: 'clip_3_1_fast', prompt: 'waves', first_image: frame });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json.id ?? created.json.task_id ?? created.json.data?.task_id) as string;
    const task = await gw.waitForTask(id, undefined, 30_000);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(main.submits.at(-1)).toMatchObject({ model: 'fal-ai/veo3/image-to-video', input: { image_url: frame, duration: '8s', aspect_ratio: '16:9' } });
    expect(main.notFound).toEqual([]);
    expect(task.result?.files[0]).toMatchObject({ contentType: 'video/mp4', width: 320, height: 180 });
  });

  it('a field no candidate maps: a 400 at submit naming it, nothing sent', async () => {
    const before = main.submits.length + backup.submits.length;
    const res = await submit('/v1/pic/images', { model: 'pic', prompt: 'x', size: '21:9' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'size' });
    expect(res.json.error.message).toMatch(/size 21:9: the fal model fal-ai\/flux\/dev takes/);
    expect(main.submits.length + backup.submits.length).toBe(before);
  });

  it("an exhausted balance at the first candidate is the channel's fault: the task completes at the second", async () => {
    main.script('submit', exhaustedBalance);
    const before = backup.submits.length;
    const created = await submit('/v1/pic/images', { model: 'pic', prompt: 'a quiet bay' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('falBackup');
    expect(backup.submits.length - before).toBe(1);
  });

  it("a model's refusal shown only on the result fails the task saying so", async () => {
    const created = await submit('/v1/pic/images', { model: 'pic', prompt: 'a [nsfw] bay' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/content checker \(content_policy_violation\)/);
  });

  it('an image the safety checker blacked out (200, has_nsfw_concepts [true]) fails the task; no other generation is made (G436)', async () => {
    const before = main.submits.length + backup.submits.length;
    const created = await submit('/v1/pic/images', { model: 'pic', prompt: 'a bay [nsfw-output]' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/held back by the upstream model's safety checker: the fal model fal-ai\/flux\/dev flagged every image it made/);
    expect(main.submits.length + backup.submits.length - before).toBe(1);
  });
});

describe('a fal model that answers its files inline (sync_mode)', () => {
  it('pic: the data: URI image is stored and served by the gateway, the task keeping only its media type as the source', async () => {
    const fal = await startFakeFal();
    const models = { ...FAL_MODELS, 'fal-ai/flux/dev': { ...FAL_MODELS['fal-ai/flux/dev']!, constants: { num_images: 1, sync_mode: true } } };
    const inline = await listeningGateway({
      env: {
        MEDIAGATE_PROVIDERS: file({
          providers: { fal: { type: 'fal', baseUrl: fal.baseUrl, apiKeyEnv: 'FAL_KEY', pollSeconds: 0.05, models } },
          routes: { pic: [{ provider: 'fal', model: 'fal-ai/flux/dev' }] },
        }),
        FAL_KEY: fal.apiKey,
      },
    });
    try {
      const created = await submitJson(inline, '/v1/pic/images', { model: 'pic', prompt: 'a quiet bay', size: '16:9' });
      const task = await inline.waitForTask(created.json.id);
      expect(task.status, task.error ?? '').toBe('completed');
      expect(fal.submits).toHaveLength(1);
      expect(task.result?.sourceUrls).toEqual(['data:image/png']);
      const query = (await inline.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: inline.auth() })).json();
      const got = await downloadServed(inline.origin, query.image_url);
      expect(sniffContentType(got)).toBe('image/png');
      expect(await imageFacts(got)).toMatchObject({ width: 1024, height: 576 });
    } finally {
      await inline.close();
      await fal.close();
    }
  });
});

describe('a gateway that stops after fal accepted a request', () => {
  it('is followed by a second gateway on the same store: it checks the saved request and never submits again', async () => {
    const fal = await startFakeFal();
    const dir = tempDir('mediagate-fal-crash-');
    const env = {
      MEDIAGATE_DATA_DIR: dir,
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_ALLOW_PRIVATE_URLS: '1',
      MEDIAGATE_RATE_LIMIT: 'off',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
      MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      MEDIAGATE_LEASE_SECONDS: '2',
      MEDIAGATE_PROVIDERS: providersFile(fal.baseUrl, fal.baseUrl),
      FAL_KEY: fal.apiKey,
      FAL_BACKUP_KEY: fal.apiKey,
    };
    const open = async (): Promise<Gateway> => {
      const g = await createGateway(loadConfig(env), { store: openSqliteStore(path.join(dir, 'store.db')), runnerPollMs: 50 });
      g.runner?.start();
      return g;
    };
    let first: Gateway | undefined = await open();
    let second: Gateway | undefined;
    try {
      const key = (await createApiKey(first.store.keys, 'alice')).secret;
      const res = await first.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: { authorization: `Bearer ${key}` },
        payload: { model: 'pic', prompt: 'one only [hold]' },
      });
      expect(res.statusCode).toBe(200);
      const taskId = res.json().id as string;
      const requestId = await waitFor(async () => (await first!.store.tasks.get(taskId))?.upstream?.ref?.id, 15_000, 'the request id saved');
      await waitFor(() => (fal.calls.includes(`status ${requestId}`) ? true : undefined), 15_000, 'a first check');
      await first.close(0);
      first = undefined;
      const statusLooks = fal.calls.filter((c) => c === `status ${requestId}`).length;

      fal.release(requestId); // the generation finishes while no gateway runs
      second = await open();
      const task = await waitFor(
        async () => {
          const t = await second!.store.tasks.get(taskId);
          return t && ['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
        },
        20_000,
        'the task to end at the second gateway',
      );
      expect(task.status, task.error ?? '').toBe('completed');
      expect(fal.submits.filter((s) => String(s.input.prompt).startsWith('one only'))).toHaveLength(1);
      expect(fal.calls.filter((c) => c === `status ${requestId}`).length).toBeGreaterThan(statusLooks);
      expect(fal.calls).toContain(`result ${requestId}`);
      expect(task.result?.files[0]).toMatchObject({ contentType: 'image/png', width: 1024, height: 1024 });
    } finally {
      await first?.close(0);
      await second?.close(0);
      await fal.close();
    }
  }, 60_000);
});
