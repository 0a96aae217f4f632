/**
 * A gateway built from providers.json with `openai-images` providers in front of fake Images APIs:
 * pic and Model Center image tasks complete with the image re-hosted by the gateway (its probed
 * size is the one asked), reference images reach the edits endpoint; a request no candidate can
 * honour is a 400 at submit naming the field; a prompt the safety system refuses fails the task
 * with a message saying so; a quota fault at the first candidate fails over to the second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTA_ERROR, startFakeOpenAiImages, type FakeOpenAiImages } from '../../fakes/openai-images.js';
import { configFiles } from '../../helpers/config-files.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';
import { image, startMediaServer, type MediaServer } from '../../helpers/media-fixtures.js';
import { imageFacts, sniffContentType } from '../../helpers/media-facts.js';
import { downloadServed, submitJson } from '../../helpers/gateway-calls.js';

const { file } = configFiles('mediagate-openai-images-');
let main: FakeOpenAiImages;
let backup: FakeOpenAiImages;
let media: MediaServer;
let gw: ListeningGateway;

beforeAll(async () => {
  [main, backup, media] = await Promise.all([startFakeOpenAiImages(), startFakeOpenAiImages(), startMediaServer()]);
  const providers = file({
    providers: {
      oai: { type: 'openai-images', baseUrl: main.baseUrl, apiKeyEnv: 'OAI_KEY', timeoutMs: 20_000 },
      backup: { type: 'openai-images', baseUrl: backup.baseUrl, apiKeyEnv: 'BACKUP_KEY' },
      dalle: { type: 'openai-images', baseUrl: main.baseUrl, apiKeyEnv: 'OAI_KEY', concurrency: 2 },
    },
    routes: {
      'pic-2': [
        { provider: 'oai', model: 'gpt-image-2' },
        { provider: 'backup', model: 'gpt-image-2' },
      ],
      'imagegen-5.0': [{ provider: 'oai', model: 'gpt-image-1' }],
      pic: [{ provider: 'dalle', model: 'dall-e-3' }],
    },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers, OAI_KEY: main.apiKey, BACKUP_KEY: backup.apiKey } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([main?.close(), backup?.close(), media?.close()]);
});

const submit = (url: string, payload: Record<string, unknown>) => submitJson(gw, url, payload);

const download = (url: string) => downloadServed(gw.origin, url);

describe('openai-images in a gateway built from providers.json', () => {
  it('pic-2 16:9 2k: made by gpt-image-2 at exactly 2048x1152, re-hosted by the gateway', async () => {
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a harbour at dawn', size: '16:9', resolution: '2k' });
    expect(created.status).toBe(200);
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('oai');
    const sent = main.requests.at(-1)!;
    expect(sent.fields).toMatchObject({ model: 'gpt-image-2', prompt: 'a harbour at dawn', size: '2048x1152', output_format: 'png' });
    expect(sent.fields.response_format).toBeUndefined();
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: gw.auth() })).json();
    const bytes = await download(query.image_url);
    expect(sniffContentType(bytes)).toBe('image/png');
    expect(await imageFacts(bytes)).toMatchObject({ width: 2048, height: 1152 });
  });

  it('a Model Center image model with reference images: edits with image[], the result re-hosted', async () => {
    const ref = media.serve('/ref.png', await image(320, 320, 'png'), 'image/png');
    const created = await submit('/v2/model-center/tasks', { model: 'imagegen-5.0', prompt: 'the same cat, in ink', image_urls: [ref], size: '1536x1024' });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json.id ?? created.json.data?.id ?? created.json.data?.task_id) as string;
    const task = await gw.waitForTask(id);
    expect(task.status, task.error ?? '').toBe('completed');
    const sent = main.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.fields).toMatchObject({ model: 'gpt-image-1', size: '1536x1024' });
    expect(sent.images).toEqual([{ field: 'image[]', type: 'image/png', bytes: (await image(320, 320, 'png')).length }]);
    expect(task.result?.files[0]).toMatchObject({ contentType: 'image/png', width: 1536, height: 1024 });
  });

  it('a reference image on a route to dall-e-3 only: a 400 at submit naming the field, nothing sent', async () => {
    const before = main.requests.length;
    const res = await submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: [media.serve('/r2.png', await image(32, 32), 'image/png')] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'image_urls[0]' });
    expect(res.json.error.message).toMatch(/dall-e-3 takes no reference images/);
    expect(main.requests.length).toBe(before);
  });

  it('a prompt the safety system refuses: the task fails with a message saying so, no failover', async () => {
    const before = backup.requests.length;
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'an [unsafe] harbour' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/refused by the upstream's safety system \(moderation_blocked\)/);
    expect(task.error).not.toContain('127.0.0.1');
    expect(backup.requests.length).toBe(before);
  });

  it("insufficient_quota at the first candidate is the channel's fault: the task completes at the second", async () => {
    main.script(QUOTA_ERROR);
    const before = { main: main.requests.length, backup: backup.requests.length };
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a quiet bay' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('backup');
    expect(main.requests.length - before.main).toBe(1);
    expect(backup.requests.length - before.backup).toBe(1);
  });
});
