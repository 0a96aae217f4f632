/**
 * comfyui in gateways built from providers.json, in front of fake ComfyUIs: `{"type": "comfyui",
 * "baseUrl": ...}` alone serves pic with the built-in image template, its PNG re-hosted by the
 * gateway; a clip with a first frame runs the built-in image-to-video template (the frame uploaded)
 * and its video is re-hosted at the size ComfyUI made; an operator's template read from a workflow
 * file beside providers.json; a request the template cannot honour is a 400 at submit; a server
 * without the template's checkpoint fails over to the next; and a worker that dies after ComfyUI
 * queued the prompt but before its id was saved is followed by one that finds that prompt (by its
 * id, or on an older ComfyUI by the mark in extra_data) and never queues a second.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import { claimNextTask } from '../../src/tasks/states.js';
import { jobOf } from '../../src/tasks/task-work.js';
import { startFakeComfyUi, type FakeComfyUi } from '../fakes/comfyui.js';
import { configFiles } from '../helpers/config-files.js';
import { downloadServed, submitJson } from '../helpers/gateway-calls.js';
import { createHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { imageFacts, sniffContentType } from '../helpers/media-facts.js';
import { image, startMediaServer, type MediaServer } from '../helpers/media-fixtures.js';
import { previewTemplate } from '../helpers/comfyui-jobs.js';

const { dir, file } = configFiles('mediagate-comfyui-');
let main: FakeComfyUi;
let bare: FakeComfyUi;
let media: MediaServer;
let gw: ListeningGateway;

beforeAll(async () => {
  [main, bare, media] = await Promise.all([startFakeComfyUi(), startFakeComfyUi({ installed: { checkpoints: [] } }), startMediaServer()]);
  fs.mkdirSync(path.join(dir, 'workflows'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'workflows', 'preview.json'), JSON.stringify(previewTemplate().workflow));
  const providers = file({
    providers: {
      // a ComfyUI without the SDXL checkpoint first: the template cannot run there
      bare: { type: 'comfyui', baseUrl: bare.baseUrl, pollSeconds: 0.05 },
      comfy: {
        type: 'comfyui',
        baseUrl: main.baseUrl,
        pollSeconds: 0.05,
        models: {
          preview: {
            workflow: 'workflows/preview.json',
            makes: 'image',
            slots: { prompt: '6.text', seed: '3.seed', width: '5.width', height: '5.height' },
            outputs: ['9'],
          },
        },
      },
    },
    routes: {
      pic: [{ provider: 'comfy' }],
      'pic-2': [{ provider: 'bare' }, { provider: 'comfy' }],
      'pic-pro': [{ provider: 'comfy', model: 'preview' }],
      clip_3_1_fast: [{ provider: 'comfy', model: 'image-to-video' }],
      motion_2_0: [{ provider: 'comfy' }],
    },
  });
  gw = await listeningGateway({ env: { MEDIAGATE_PROVIDERS: providers } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([main?.close(), bare?.close(), media?.close()]);
});

const submit = (url: string, payload: Record<string, unknown>) => submitJson(gw, url, payload);
const promptsOf = (fake: FakeComfyUi, text: string) => fake.prompts.filter((p) => JSON.stringify(p.body.prompt).includes(text));

describe('comfyui in a gateway built from providers.json', () => {
  it('pic on the built-in image template: one prompt, its PNG re-hosted by the gateway at the size ComfyUI made', async () => {
    const created = await submit('/v1/pic/images', { model: 'pic', prompt: 'a harbour at dawn', size: '16:9' });
    expect(created.status).toBe(200);
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('comfy');
    expect(promptsOf(main, 'a harbour at dawn')).toHaveLength(1);
    const query = (await gw.app.inject({ method: 'GET', url: `/v1/result/${task.id}`, headers: gw.auth() })).json();
    const bytes = await downloadServed(gw.origin, query.image_url);
    expect(sniffContentType(bytes)).toBe('image/png');
    expect(await imageFacts(bytes)).toMatchObject({ width: 1024, height: 576 });
    expect(JSON.stringify(query)).not.toContain(main.baseUrl);
    expect(task.result?.sourceUrls?.[0]).toMatch(/\/view\?filename=image_\d{5}_\.png&subfolder=mediagate&type=output$/);
  });

  it('clip with a first frame on the image-to-video template: the frame uploaded, the video re-hosted at 1280x704 (what Wan made of 720p)', async () => {
    const frame = media.serve('/first.png', await image(320, 180), 'image/png');
    const created = await submit('/clip/videos', { model: 'clip_3_1_fast', prompt: 'the tide comes in', first_image: frame });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json.id ?? created.json.task_id ?? created.json.data?.task_id) as string;
    const task = await gw.waitForTask(id, undefined, 30_000);
    expect(task.status, task.error ?? '').toBe('completed');
    const [prompt] = promptsOf(main, 'the tide comes in');
    const wf = prompt!.body.prompt as Record<string, { inputs: Record<string, unknown> }>;
    expect(wf['56']!.inputs.image).toBe(`mediagate/${id}-g0-first_frame.png`);
    expect(main.uploads.map((u) => u.name)).toContain(`mediagate/${id}-g0-first_frame.png`);
    expect(task.result?.files[0]).toMatchObject({ contentType: 'video/mp4', width: 1280, height: 704 });
    expect(task.result?.actualDuration).toBeCloseTo(193 / 24, 1);
  });

  it('an operator\'s template from a workflow file beside providers.json (route model "preview"); its preview image is not a result', async () => {
    const created = await submit('/v1/pic/images', { model: 'pic-pro', prompt: 'a preview workflow' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.result?.files).toHaveLength(1);
    expect(task.result?.sourceUrls?.[0]).toMatch(/filename=img_\d{5}_\.png&subfolder=tests&type=output/);
  });

  it('a field the template has no slot for: a 400 at submit naming it, nothing queued', async () => {
    const before = main.prompts.length + bare.prompts.length;
    const res = await submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: [media.serve('/ref.png', await image(64, 64), 'image/png')] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'image_urls[0]' });
    expect(res.json.error.message).toMatch(/the ComfyUI template "image" takes 0 reference images/);
    expect(main.prompts.length + bare.prompts.length).toBe(before);
  });

  it("a ComfyUI without the template's checkpoint is the channel's fault: the task completes at the next candidate", async () => {
    const created = await submit('/v1/pic/images', { model: 'pic-2', prompt: 'a quiet bay' });
    const task = await gw.waitForTask(created.json.id);
    expect(task.status, task.error ?? '').toBe('completed');
    expect(task.provider).toBe('comfy');
    expect(promptsOf(bare, 'a quiet bay')).toHaveLength(0);
    expect(promptsOf(main, 'a quiet bay')).toHaveLength(1);
  });
});

describe('comfyui: a cancel through the gateway', () => {
  it('a motion task cancelled while its prompt runs: the task is cancelled at once, the prompt interrupted by its id', async () => {
    const frame = media.serve('/motion-first.png', await image(640, 360), 'image/png');
    const created = await gw.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: gw.auth(),
      payload: {
        model: 'motion_2_0',
        content: [
          { type: 'text', text: 'a slow pan [hold]' },
          { type: 'image_url', image_url: { url: frame } },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id as string;
    const promptId = await waitFor(
      async () => {
        const ref = (await gw.store.tasks.get(id))?.upstream?.ref?.id;
        return ref && main.running() === ref ? ref : undefined;
      },
      15_000,
      'the prompt to run',
    );
    const res = await gw.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: gw.auth() });
    expect(res.statusCode, res.body).toBe(200);
    expect((await gw.store.tasks.get(id))!.status).toBe('cancelled');
    await waitFor(() => (main.interrupts.length > 0 ? true : undefined), 15_000, 'the interrupt');
    expect(main.interrupts).toEqual([{ asked: promptId, interrupted: promptId }]);
    expect(main.calls.filter((c) => c.startsWith('POST /interrupt'))).toEqual([`POST /interrupt {"prompt_id":"${promptId}"}`]);
  });
});

describe('comfyui: a worker that dies after ComfyUI queued the prompt, before its id was saved', () => {
  it.each([
    ["a ComfyUI that takes the client's prompt id (found in the queue, then followed to its end)", true],
    ['an older ComfyUI that chooses its own id (found by the mark in extra_data while queued)', false],
  ])(
    '%s: one prompt',
    async (_name, clientPromptIds) => {
      const fake = await startFakeComfyUi({ clientPromptIds });
      const provider = createComfyUiProvider({ id: 'comfy', baseUrl: fake.baseUrl, pollSeconds: 0.05 });
      const routes = { pic: [{ provider: 'comfy', priority: 0, weight: 1 }] };
      const h = await createHarness({ providers: [provider], routes, workers: false, env: { MEDIAGATE_LEASE_SECONDS: '2' } });
      try {
        const id = (
          await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt: 'after the crash [hold]' } })
        ).json().id as string;
        // the "dead" worker claims the task and queues the prompt; it dies before saving the prompt id
        const claimed = (await claimNextTask(h.store.tasks, ['comfy'], 'dead', 200))!;
        const started = await provider.start(jobOf(claimed, 'comfy'), { signal: new AbortController().signal, log: createLogger('silent') } as never);
        if (started.state !== 'started') throw new Error('expected a started prompt');
        await h.store.tasks.updateIf(id, { statusIn: ['processing'], leaseOwner: 'dead' }, { leaseExpiresAt: Date.now() - 1 });
        expect((await h.store.tasks.get(id))!.upstream?.ref).toBeUndefined();
        const { createGateway } = await import('../../src/main/gateway.js');
        const worker = await createGateway({ ...h.config, workers: true }, { store: h.store, providers: [provider], routes, runnerPollMs: 20 });
        worker.runner!.start();
        try {
          const saved = await (async () => {
            for (let i = 0; i < 200; i++) {
              const ref = (await h.store.tasks.get(id))?.upstream?.ref;
              if (ref) return ref;
              await new Promise((r) => setTimeout(r, 25));
            }
            throw new Error('no prompt id saved');
          })();
          expect(saved.id).toBe(started.ref.id);
          fake.release(started.ref.id);
          const done = await h.waitForTask(id);
          expect(done.status, done.error ?? '').toBe('completed');
          expect(promptsOf(fake, 'after the crash')).toHaveLength(1);
        } finally {
          await worker.runner!.stop(500);
        }
      } finally {
        await h.close(); // closes the provider too
        await fake.close();
      }
    },
    30_000,
  );
});
