/**
 * The comfyui provider against the fake ComfyUI: the provider contract; what a start sends (the
 * filled workflow, this generation's prompt id and seed, `client_id`, `extra_data.mediagate`, the
 * caller's frame uploaded first); a check as one queue look while the prompt waits or runs, then
 * its history; results as `/view` files of the task's kind (never temp previews); a start repeated
 * after a lost answer following the first prompt; and how failures are classified.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import { promptIdOf, seedOf } from '../../src/providers/comfyui/prompt-identity.js';
import { ChannelError, UnrecoverableError, type CheckResult, type MediaProvider, type ProviderJob } from '../../src/providers/types.js';
import type { UpstreamRef } from '../../src/contract/task-request.js';
import { clip, comfyContext, modelCenter, pic, previewTemplate, templateWithCheckpoint } from '../helpers/comfyui-jobs.js';
import { startFakeComfyUi, type FakeComfyUi } from '../fakes/comfyui.js';
import { runProviderContract } from '../cases/provider-contract.case.js';

let fake: FakeComfyUi;
let provider: MediaProvider;
// the contract's aborted jobs leave prompts running at their ComfyUI (one worker): a fake of their own
let contractFake: FakeComfyUi;
let contractProvider: MediaProvider;
beforeAll(async () => {
  [fake, contractFake] = await Promise.all([startFakeComfyUi(), startFakeComfyUi()]);
  provider = createComfyUiProvider({
    id: 'comfy',
    baseUrl: fake.baseUrl,
    timeoutMs: 20_000,
    templates: { 'sdxl-preview': previewTemplate(), 'missing-ckpt': templateWithCheckpoint('nope.safetensors') },
  });
  contractProvider = createComfyUiProvider({ id: 'comfy', baseUrl: contractFake.baseUrl, timeoutMs: 20_000 });
});
afterAll(async () => {
  await Promise.all([provider?.close?.(), contractProvider?.close?.()]);
  await Promise.all([fake?.close(), contractFake?.close()]);
});

runProviderContract('comfyui (against the fake ComfyUI)', {
  make: () => contractProvider,
  jobs: [
    { name: 'pic 16:9 on the built-in image template', job: () => pic({ size: '16:9' }) },
    { name: 'clip from a first frame on the built-in image-to-video template', job: () => clip({}) },
  ],
  longJob: () => pic({ prompt: 'a fox [hold]' }),
  unrecoverableJob: () => pic({ image_urls: ['http://media.test/ref.png'] }),
  context: { readMedia: comfyContext().readMedia },
});

async function started(job: ProviderJob, p = provider): Promise<UpstreamRef> {
  const out = await p.start!(job, comfyContext());
  expect(out.state).toBe('started');
  return (out as Extract<typeof out, { state: 'started' }>).ref;
}
/** Checks until the generation ends; the progress of each pending look, in order. */
async function finish(job: ProviderJob, ref: UpstreamRef, p = provider): Promise<{ end: CheckResult; progress: (number | undefined)[] }> {
  const progress: (number | undefined)[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await p.check!(ref, job, comfyContext());
    if (r.state !== 'pending') return { end: r, progress };
    progress.push(r.progress);
  }
  throw new Error('never ended');
}
const sent = (promptId: string) =>
  fake.prompts.find((p) => p.promptId === promptId)!.body as {
    prompt: Record<string, { inputs: Record<string, unknown> }>;
    client_id: string;
    prompt_id: string;
    extra_data: Record<string, unknown>;
  };

describe('comfyui: what a start sends', () => {
  it("pic 16:9: the workflow with prompt, size and this generation's seed written in, under this generation's prompt id", async () => {
    const job = pic({ size: '16:9', prompt: 'a red fox' });
    const ref = await started(job);
    expect(ref.id).toBe(promptIdOf(job.taskId, 0));
    const body = sent(ref.id);
    expect(body.prompt_id).toBe(ref.id);
    expect(body.client_id).toBe('mediagate:comfy');
    expect(body.extra_data).toEqual({ mediagate: { task: job.taskId, generation: 0 } });
    expect(body.prompt['6']!.inputs.text).toBe('a red fox');
    expect(body.prompt['7']!.inputs.text).toBe('text, watermark, blurry, low quality'); // the template's own negative prompt
    expect(body.prompt['5']!.inputs).toMatchObject({ width: 1024, height: 576, batch_size: 1 });
    expect(body.prompt['3']!.inputs.seed).toBe(seedOf(job.taskId, 0));
    expect(body.prompt['4']!.inputs.ckpt_name).toBe('sd_xl_base_1.0.safetensors');
    const { end } = await finish(job, ref);
    expect(end.state).toBe('completed');
  });

  it('a new generation of the same task is a new prompt id and a new seed (ComfyUI would answer an identical prompt from its cache)', async () => {
    const first = pic({});
    const second = { ...first, generation: 1 };
    const [a, b] = [await started(first), await started(second)];
    expect(a.id).not.toBe(b.id);
    expect(sent(a.id).prompt['3']!.inputs.seed).not.toBe(sent(b.id).prompt['3']!.inputs.seed);
    await finish(first, a);
    await finish(second, b);
  });

  it('clip with a first frame: the frame uploaded into input/mediagate (overwrite), the LoadImage given its name; 720p snapped to 32, 8 s as 4n+1 frames at 24 fps', async () => {
    const job = clip({});
    const ref = await started(job);
    const name = `mediagate/${job.taskId}-g0-first_frame.png`;
    expect(fake.uploads.at(-1)).toMatchObject({ name, subfolder: 'mediagate' });
    const body = sent(ref.id);
    expect(body.prompt['56']!.inputs.image).toBe(name);
    expect(body.prompt['55']!.inputs).toMatchObject({ width: 1280, height: 704, length: 193 });
    const { end } = await finish(job, ref);
    expect(end.state).toBe('completed');
    const [file] = (end as Extract<CheckResult, { state: 'completed' }>).output.files;
    expect(file).toMatchObject({ kind: 'video', trusted: true });
    expect((file as { url: string }).url).toMatch(/\/view\?filename=video_\d{5}_\.mp4&subfolder=mediagate&type=output$/);
  });
});

describe('comfyui: checks', () => {
  it('one queue look while the prompt waits or runs; its history once it left the queue; /view files of type output only', async () => {
    const job = pic({ size: '1:1' }, 'sdxl-preview');
    const ref = await started(job);
    const before = fake.calls.length;
    const { end, progress } = await finish(job, ref);
    expect(fake.calls.slice(before)).toEqual(['GET /queue', 'GET /queue', 'GET /queue', `GET /history/${ref.id}`]);
    expect(progress).toEqual([9, undefined]); // at the head of the queue, then running (the engine's estimate)
    const files = (end as Extract<CheckResult, { state: 'completed' }>).output.files;
    // the PreviewImage's temp file is not a result
    expect(files).toEqual([{ url: expect.stringMatching(/\/view\?filename=img_\d{5}_\.png&subfolder=tests&type=output$/), kind: 'image', trusted: true }]);
    expect(fake.history(ref.id)!.outputs).toMatchObject({ 10: { images: [{ type: 'temp' }] } });
  });

  it('progress while queued counts the prompts that run first (the queue answers in heap order, not run order)', async () => {
    const blocker = await fake.foreign("someone else's long render [hold]");
    const ahead = await fake.foreign("someone else's next render");
    const job = pic({});
    const ref = await started(job);
    // 2 ahead of it: the running one, and the waiting one with a lower number (listed after it)
    expect(await provider.check!(ref, job, comfyContext())).toEqual({ state: 'pending', progress: 7 });
    expect(await provider.check!(ref, job, comfyContext())).toEqual({ state: 'pending', progress: 7 });
    fake.release(blocker);
    const { end, progress } = await finish(job, ref);
    expect(end.state).toBe('completed');
    expect(progress).toEqual([7, 8, 8, 9, undefined]);
    expect(fake.history(ahead)).toBeDefined();
  });

  it('a prompt ComfyUI no longer knows (restarted: queue and history are in memory) is a failed generation a new one may follow', async () => {
    const job = pic({ prompt: 'lost [hold]' });
    const ref = await started(job);
    await provider.check!(ref, job, comfyContext());
    fake.restart();
    const r = await provider.check!(ref, job, comfyContext());
    expect(r.state).toBe('failed');
    const err = (r as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect(err.message).toMatch(/no longer knows prompt .* ComfyUI restarted/);
  });

  it("a template that made no file of the task's kind is a failed generation naming what it made", async () => {
    const job = pic({});
    const ref = await started(job);
    const r = await finish(job, { ...ref, data: { ...ref.data, kind: 'video' } });
    expect(r.end.state).toBe('failed');
    expect((r.end as Extract<CheckResult, { state: 'failed' }>).error.message).toMatch(/template "image" made no video file \(it made image_\d{5}_\.png\)/);
  });
});

describe('comfyui: a start repeated after its answer was lost', () => {
  it('finds the prompt of the same generation (queued, then finished) and queues nothing new', async () => {
    const job = pic({ prompt: 'once [hold]' });
    const ref = await started(job);
    const queued = fake.prompts.length;
    expect(await started(job)).toEqual(ref);
    fake.release(ref.id);
    await finish(job, ref);
    expect(await started(job)).toEqual(ref); // in the history now
    expect(fake.prompts.length).toBe(queued);
  });

  it('a ComfyUI that chooses its own prompt ids (older versions) is searched by the mark in extra_data', async () => {
    const old = await startFakeComfyUi({ clientPromptIds: false });
    const p = createComfyUiProvider({ id: 'old', baseUrl: old.baseUrl });
    try {
      const job = pic({ prompt: 'older server [hold]' });
      const ref = await started(job, p);
      expect(ref.id).not.toBe(promptIdOf(job.taskId, 0));
      expect(await started(job, p)).toEqual(ref);
      expect(old.prompts).toHaveLength(1);
    } finally {
      await p.close?.();
      await old.close();
    }
  });
});

describe('comfyui: failures', () => {
  it('a value ComfyUI refuses in an input a request field was written into: the task fails naming that field', async () => {
    const job = modelCenter({ sampler: 'no-such-sampler' }, 'sdxl-preview');
    const err = await provider.start!(job, comfyContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'sampler' });
    expect((err as Error).message).toMatch(
      /^sampler: ComfyUI refused the value written into 3\.sampler_name of template "sdxl-preview": Value not in list: sampler_name: 'no-such-sampler' not in \[/,
    );
  });

  it("a checkpoint that server does not have is the template's fault there: a ChannelError naming node and input (the next candidate may have it)", async () => {
    const err = await provider.start!(pic({}, 'missing-ckpt'), comfyContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(
      /cannot run the template "missing-ckpt" \(prompt_outputs_failed_validation\): node 4 \(CheckpointLoaderSimple\) input ckpt_name: Value not in list: ckpt_name: 'nope\.safetensors'/,
    );
    expect((err as Error).message).toContain('"comfy"');
    expect((err as Error).message).not.toContain('127.0.0.1');
  });

  it("a node type that server does not have (a custom node not installed) is the channel's fault", async () => {
    const t = structuredClone(previewTemplate('custom'));
    t.workflow['10']!.class_type = 'VHS_VideoCombine';
    const p = createComfyUiProvider({ id: 'comfy', baseUrl: fake.baseUrl, templates: { custom: t } });
    const err = await p.start!(pic({}, 'custom'), comfyContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await p.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/\(missing_node_type\): Node 'VHS_VideoCombine' not found/);
  });

  it.each([
    ['503', { status: 503, body: { error: 'busy' } }, /failed \(HTTP 503\)/],
    ['a reset connection', 'reset' as const, /broke before its answer was complete|connection/],
  ])("a prompt answered %s is the channel's fault", async (_name, answer, message) => {
    fake.script('prompt', answer);
    const err = await provider.start!(pic({}), comfyContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
  });

  it('a server that is not there: ChannelError (the start moves on)', async () => {
    const gone = await startFakeComfyUi();
    const url = gone.baseUrl;
    await gone.close();
    const p = createComfyUiProvider({ id: 'gone', baseUrl: url, connectTimeoutMs: 2000 });
    const err = await p.start!(pic({}), comfyContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await p.close?.();
    expect(err).toBeInstanceOf(ChannelError);
  });

  it.each([
    ['out of GPU memory', '[oom]', /failed in node 3 \(KSampler\), out of GPU memory: torch\.OutOfMemoryError: Allocation on device/],
    ['a node that raised', '[crash]', /failed in node 3 \(KSampler\): RuntimeError: mat1 and mat2 shapes cannot be multiplied/],
  ])("a workflow that failed while running (%s) is a failed generation, not the caller's fault", async (_name, marker, message) => {
    const job = pic({ prompt: `a fox ${marker}` });
    const { end } = await finish(job, await started(job));
    expect(end.state).toBe('failed');
    const err = (end as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(message);
  });

  it('a queue look the channel cannot answer is thrown (looked at again later)', async () => {
    const job = pic({});
    const ref = await started(job);
    fake.script('queue', { status: 502, body: { error: 'bad gateway' } });
    await expect(provider.check!(ref, job, comfyContext())).rejects.toBeInstanceOf(ChannelError);
    expect((await finish(job, ref)).end.state).toBe('completed');
  });

  it("a key is sent as a bearer token to every call and with the file downloads; a wrong one is the channel's fault", async () => {
    const guarded = await startFakeComfyUi({ token: 'tok-123456' });
    const p = createComfyUiProvider({ id: 'guarded', baseUrl: guarded.baseUrl, apiKey: 'tok-123456' });
    const wrong = createComfyUiProvider({ id: 'guarded', baseUrl: guarded.baseUrl, apiKey: 'tok-wrong' });
    try {
      const job = pic({});
      const { end } = await finish(job, await started(job, p), p);
      expect((end as Extract<CheckResult, { state: 'completed' }>).output.files[0]).toMatchObject({ headers: { authorization: 'Bearer tok-123456' } });
      const err = await wrong.start!(pic({}), comfyContext()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as Error).message).toMatch(/HTTP 401/);
      expect((err as Error).message).not.toContain('tok-wrong');
    } finally {
      await p.close?.();
      await wrong.close?.();
      await guarded.close();
    }
  });
});
