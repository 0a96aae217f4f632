import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planClipTask } from '../../src/contract/clip.js';
import { paramFields } from '../../src/contract/family-request.js';
import { planModelCenterTask } from '../../src/contract/model-center.js';
import { planPicTask } from '../../src/contract/pic.js';
import { createGeminiProvider } from '../../src/providers/gemini/index.js';
import { ChannelError, UnrecoverableError, type MediaProvider, type ProviderContext, type ProviderJob, type RemoteFile } from '../../src/providers/types.js';
import { INTERNAL, LOCATION, quotaExceeded } from '../fakes/gemini-rules.js';
import { startFakeGemini, type FakeGemini } from '../fakes/gemini.js';
import { image } from '../helpers/media-fixtures.js';
import { runProviderContract, runToOutput } from '../cases/provider-contract.case.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let fake: FakeGemini;
let provider: MediaProvider;
beforeAll(async () => {
  fake = await startFakeGemini();
  fake.pollsToFinish = 2;
  provider = createGeminiProvider({ id: 'gem', baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await fake?.close();
});

const any = asBody;
const jobOf = jobOfPlan;
const FLASH = 'gemini-2.5-flash-image';
const PRO = 'gemini-3-pro-image-preview';
const VEO = 'veo-3.1-generate-preview';
const pic = (body: Record<string, unknown>, upstream = PRO) => jobOf(planPicTask(any({ model: 'pic-2', prompt: 'a fox', ...body })), upstream);
const clip = (body: Record<string, unknown>, upstream = VEO) => jobOf(planClipTask(any({ model: 'clip_3_1_fast', prompt: 'a fox runs', ...body })), upstream);
const mcImage = (body: Record<string, unknown>, upstream = PRO) =>
  jobOf(planModelCenterTask(any({ model: 'imagegen-5.0', prompt: 'a fox', ...body })), upstream);
const mcVideo = (body: Record<string, unknown>, upstream = VEO) =>
  jobOf(planModelCenterTask(any({ model: 'studio-1.1-t2v', prompt: 'a fox', duration: 8, ...body })), upstream);

const refs = new Map<string, Buffer>();
const context = (): ProviderContext =>
  providerContext({
    readMedia: async (ref) => refs.get(ref.url) ?? Promise.reject(new Error(`no such medium ${ref.url}`)),
    mediaUrl: (ref) => ref.url,
  });
const lastPost = () => fake.calls.filter((c) => c.method === 'POST').at(-1)!;

runProviderContract('gemini (against the fake Gemini API)', {
  make: () => provider,
  jobs: [
    { name: 'pic 16:9 on gemini-2.5-flash-image', job: () => pic({ model: 'pic', size: '16:9' }, FLASH) },
    { name: 'clip 9:16 720p on Veo 3.1', job: () => clip({ aspect_ratio: '9:16' }) },
  ],
  longJob: () => pic({ prompt: 'a fox [hold]' }),
  unrecoverableJob: () => pic({ prompt: 'a [blocked] fox' }),
});

describe('gemini: the mapping table', () => {
  it.each([
    ['pic 1:1 on flash: no imageSize', pic({ model: 'pic' }, FLASH), { aspectRatio: '1:1' }, [1024, 1024]],
    ['pic-2 16:9 2k on pro', pic({ size: '16:9', resolution: '2k' }), { aspectRatio: '16:9', imageSize: '2K' }, [2688, 1536]],
    ['pic-2 21:9 1k on pro', pic({ size: '21:9' }), { aspectRatio: '21:9', imageSize: '1K' }, [1536, 672]],
    ['Model Center aspect_ratio 3:4', mcImage({ aspect_ratio: '3:4' }), { aspectRatio: '3:4', imageSize: '1K' }, [864, 1184]],
    ['Model Center size 4:5', mcImage({ size: '4:5' }), { aspectRatio: '4:5', imageSize: '1K' }, [896, 1152]],
  ])('%s -> imageConfig %j', async (_name, job, imageConfig, [w, h]) => {
    expect(provider.refuse!(job)).toBeUndefined();
    const out = await provider.start!(job, context());
    expect(out.state).toBe('done');
    const sent = lastPost();
    expect(sent.path).toBe(`/v1beta/models/${job.upstreamModel}:generateContent`);
    expect(sent.body!.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig });
    expect(sent.body!.contents[0].parts).toEqual([{ text: paramFields(job.params).prompt }]);
    expect(sent.headers['x-goog-api-key']).toBe(fake.apiKey);
    expect(sent.path).not.toContain('key=');
    const file = (out as Extract<typeof out, { state: 'done' }>).output.files[0]!;
    expect(file).toMatchObject({ contentType: 'image/png', width: w, height: h });
  });

  it('reference images are inlineData parts after the text, read through ctx.readMedia', async () => {
    refs.set('http://media.test/a.png', await image(64, 64, 'png'));
    refs.set('http://media.test/b.jpg', await image(40, 30, 'jpeg'));
    const job = mcImage({ image_urls: ['http://media.test/a.png'], reference_images: ['http://media.test/b.jpg'] });
    job.media.images[1]!.facts = { kind: 'image', format: 'jpeg', bytes: 1 };
    expect((await provider.start!(job, context())).state).toBe('done');
    const parts = lastPost().body!.contents[0].parts;
    expect(parts.map((p: any) => p.text ?? p.inlineData.mimeType)).toEqual(['a fox', 'image/png', 'image/jpeg']);
    expect(Buffer.from(parts[2].inlineData.data, 'base64').equals(refs.get('http://media.test/b.jpg')!)).toBe(true);
  });

  it.each([
    ['clip 16:9 720p 8 s', clip({}), { aspectRatio: '16:9', durationSeconds: 8, resolution: '720p' }],
    ['clip 9:16 4K', clip({ aspect_ratio: '9:16', resolution: '4K' }), { aspectRatio: '9:16', durationSeconds: 8, resolution: '4k' }],
    [
      'Model Center 4 s 720p, negative prompt, person generation',
      mcVideo({ duration: 4, negative_prompt: 'rain', person_generation: 'allow_adult' }),
      { aspectRatio: '16:9', durationSeconds: 4, resolution: '720p', negativePrompt: 'rain', personGeneration: 'allow_adult' },
    ],
    [
      'Model Center 6 s on Veo 3.0 with generate_audio true',
      mcVideo({ duration: 6, generate_audio: true }, 'veo-3.0-generate-001'),
      { aspectRatio: '16:9', durationSeconds: 6, resolution: '720p' },
    ],
  ])('%s -> predictLongRunning parameters %j', async (_name, job, parameters) => {
    expect(provider.refuse!(job)).toBeUndefined();
    const out = await provider.start!(job, context());
    expect(out).toMatchObject({ state: 'started', ref: { id: expect.stringMatching(/^models\/veo[\w.-]+\/operations\/\w+$/) } });
    expect(out).not.toHaveProperty('progress'); // Veo reports none: the engine estimates (G129)
    const sent = lastPost();
    expect(sent.path).toBe(`/v1beta/models/${job.upstreamModel}:predictLongRunning`);
    expect(sent.body!.parameters).toEqual(parameters);
    expect(sent.body!.instances).toEqual([{ prompt: paramFields(job.params).prompt }]);
  });

  it('first and last frames go as instances[0].image and lastFrame; clip references as asset referenceImages', async () => {
    refs.set('http://media.test/f.png', await image(64, 36, 'png'));
    refs.set('http://media.test/l.png', await image(64, 36, 'png'));
    await provider.start!(clip({ first_image: 'http://media.test/f.png', last_image: 'http://media.test/l.png' }), context());
    const frames = lastPost().body!.instances[0];
    expect(Object.keys(frames)).toEqual(['prompt', 'image', 'lastFrame']);
    expect(frames.image).toEqual({ bytesBase64Encoded: refs.get('http://media.test/f.png')!.toString('base64'), mimeType: 'image/png' });
    await provider.start!(clip({ image_urls: ['http://media.test/f.png', 'http://media.test/l.png'] }), context());
    expect(lastPost().body!.instances[0].referenceImages.map((r: any) => r.referenceType)).toEqual(['asset', 'asset']);
  });

  it.each([
    ['resolution 2k on flash', pic({ resolution: '2k' }, FLASH), 'resolution', /makes 1k images only/],
    [
      'a 4th reference on flash',
      pic({ model: 'pic', image_urls: ['http://m/1.png', 'http://m/2.png', 'http://m/3.png', 'http://m/4.png'] }, FLASH),
      'image_urls[3]',
      /at most 3 reference images/,
    ],
    ['Model Center size in pixels', mcImage({ size: '1280x720' }), 'size', /an aspect ratio, not pixels/],
    ['Model Center quality', mcImage({ quality: 'high' }), 'quality', /no such input/],
    ['480p on Veo', mcVideo({ resolution: '480p' }), 'resolution', /resolution 480p: veo-3.1-generate-preview makes 720p or 1080p or 4k/],
    ['duration 5 on Veo', mcVideo({ duration: 5 }), 'duration', /duration 5: .* 4, 6, 8 seconds/],
    ['1080p at 4 s', mcVideo({ duration: 4, resolution: '1080p' }), 'resolution', /only at 8 seconds/],
    ['aspect 1:1 on Veo', mcVideo({ aspect_ratio: '1:1' }), 'aspect_ratio', /Veo makes 16:9 or 9:16/],
    ['generate_audio false on Veo 3.1', mcVideo({ generate_audio: false }), 'generate_audio', /always makes sound/],
    ['generate_audio true on Veo 2', mcVideo({ generate_audio: true }, 'veo-2.0-generate-001'), 'generate_audio', /silent videos/],
    ['an audio reference', mcVideo({ reference_audios: ['http://m/a.wav'] }), 'reference_audios[0]', /no audio references/],
    [
      'a last frame on Veo 3.0',
      clip({ first_image: 'http://m/f.png', last_image: 'http://m/l.png' }, 'veo-3.0-generate-001'),
      'last_image',
      /has no last frame/,
    ],
    ['4K on Veo 3.0', clip({ resolution: '4K' }, 'veo-3.0-fast-generate-001'), 'resolution', /makes 720p or 1080p$/],
    ['seed', mcVideo({ seed: 7 }), 'seed', /no such input/],
    ['an image model on a Veo route', pic({}, VEO), 'model', /makes videos/],
  ])('%s: refused naming the field, and the start refuses it too without calling', async (_name, job, field, message) => {
    const refusal = provider.refuse!(job);
    expect(refusal).toMatchObject({ field });
    expect(refusal!.message).toMatch(message);
    const before = fake.calls.length;
    const err = await provider.start!(job, context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as UnrecoverableError).param).toBe(field);
    expect(fake.calls.length).toBe(before);
  });
});

const startError = async (job: ProviderJob, p = provider): Promise<unknown> =>
  p.start!(job, context()).then(
    () => undefined,
    (e: unknown) => e,
  );

describe('gemini: failures', () => {
  it.each([
    ['a blocked prompt (promptFeedback.blockReason)', 'a [blocked] fox', /refused by the upstream's safety system \(blockReason PROHIBITED_CONTENT\)/],
    ['finishReason IMAGE_SAFETY with no image', 'an [image-safety] fox', /refused by the upstream's safety system \(finishReason IMAGE_SAFETY\)/],
  ])("%s is the caller's failure, naming the prompt", async (_name, prompt, message) => {
    const err = await startError(pic({ prompt }));
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'prompt' });
    expect((err as Error).message).toMatch(message);
  });

  it("a candidate with text only is neither a result nor the caller's fault: a plain failure another attempt may fix", async () => {
    const err = await startError(pic({ prompt: 'a fox [text-only]' }));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/made no image \(finishReason STOP\): I can describe/);
  });

  it('a Veo result held back by the safety filter (done, no samples, raiMediaFilteredCount 1) fails the task, never completes it', async () => {
    const err = await runToOutput(provider, clip({ prompt: 'a fox [rai]' }), context(), 10).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toMatch(/blocked by the upstream's safety filters: We encountered an issue with the audio/);
  });

  it("an operation error INVALID_ARGUMENT fails the task with the upstream's reason", async () => {
    const err = await runToOutput(provider, clip({ prompt: 'a fox [op-error]' }), context(), 10).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toMatch(/may be a minor/);
  });

  it('a 400 the request caused names the request field it is about', async () => {
    // the fake's Veo 2 takes 5-8 s; a route that sends 4 s to it is refused by the API itself
    const job = clip({}, 'veo-2.0-generate-001');
    fake.script({
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'The number value for `durationSeconds` is out of bound.',
          status: 'INVALID_ARGUMENT',
          details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'parameters.durationSeconds' }] }],
        },
      },
    });
    const err = await startError(job);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'duration' });
    expect((err as Error).message).toMatch(/^duration: The number value for `durationSeconds` is out of bound/);
  });

  it.each([
    [
      '429 RESOURCE_EXHAUSTED with RetryInfo 37s',
      quotaExceeded('37s'),
      /rate limiting the gateway or its quota is used up \(HTTP 429 RESOURCE_EXHAUSTED\)/,
      37_000,
    ],
    ['500 INTERNAL', INTERNAL, /failed \(HTTP 500\)/, undefined],
    ["400 FAILED_PRECONDITION (the account's region)", LOCATION, /cannot serve the gateway's account now \(HTTP 400 FAILED_PRECONDITION\)/, undefined],
    ['a reset connection', 'reset' as const, /broke before its answer was complete/, undefined],
  ])("%s is the channel's fault", async (_name, answer, message, retryAfterMs) => {
    fake.script(answer);
    const err = await startError(clip({}));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
    expect((err as ChannelError).retryAfterMs).toBe(retryAfterMs);
    expect((err as Error).message).toContain('"gem"');
    for (const secret of [fake.baseUrl, '127.0.0.1', fake.apiKey]) expect((err as Error).message).not.toContain(secret);
  });

  it("a wrong key (400 INVALID_ARGUMENT API_KEY_INVALID) is the channel's fault, not the caller's", async () => {
    const wrong = createGeminiProvider({ id: 'wrong', baseUrl: fake.baseUrl, apiKey: 'AIza-not-the-key' });
    const err = await startError(pic({}), wrong);
    await wrong.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/refused the gateway's credentials \(HTTP 400 API_KEY_INVALID\)/);
    expect((err as Error).message).not.toContain('AIza-not-the-key');
  });

  it("a model the route names that the API does not have is the channel's fault", async () => {
    const err = await startError(pic({}, 'gemini-9-image'));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/does not serve model "gemini-9-image"/);
  });

  it("a call longer than timeoutMs is the channel's fault", async () => {
    const slow = createGeminiProvider({ id: 'slow', baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 200 });
    const err = await startError(pic({ prompt: 'x [hold]' }), slow);
    await slow.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).code).toBe('upstream_timeout');
  });
});

describe('gemini: Veo operations and their results', () => {
  it('pending until done; the result is a RemoteFile at the API origin carrying the key, trusted; no cancel is declared', async () => {
    const job = clip({});
    const started = await provider.start!(job, context());
    if (started.state !== 'started') throw new Error('not started');
    expect(await provider.check!(started.ref, job, context())).toEqual({ state: 'pending' });
    const done = await provider.check!(started.ref, job, context());
    if (done.state !== 'completed') throw new Error(`not completed: ${JSON.stringify(done)}`);
    const file = done.output.files[0] as RemoteFile;
    expect(file).toMatchObject({ kind: 'video', trusted: true, headers: { 'x-goog-api-key': fake.apiKey } });
    expect(new URL(file.url).origin).toBe(new URL(fake.baseUrl).origin);
    expect(provider.cancel).toBeUndefined();
  });

  it('an operation the API no longer has (or a saved reference that is not an operation name) ends the generation, so a new one may start', async () => {
    const job = clip({});
    const gone = await provider.check!({ id: 'models/veo-3.1-generate-preview/operations/nothere' }, job, context());
    expect(gone.state).toBe('failed');
    expect((gone as { error: Error }).error).not.toBeInstanceOf(UnrecoverableError);
    const bogus = await provider.check!({ id: '../../etc/passwd' }, job, context());
    expect(bogus.state).toBe('failed');
  });
});
