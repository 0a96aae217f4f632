import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paramFields } from '../../src/contract/family-request.js';
import { planModelCenterTask } from '../../src/contract/model-center.js';
import { planPicTask } from '../../src/contract/pic.js';
import { createOpenAiImagesProvider } from '../../src/providers/openai-images/index.js';
import { ChannelError, UnrecoverableError, type MediaProvider, type ProviderContext, type ProviderJob } from '../../src/providers/types.js';
import { QUOTA_ERROR, rateLimited, SERVER_ERROR, startFakeOpenAiImages, type FakeOpenAiImages } from '../fakes/openai-images.js';
import { image } from '../helpers/media-fixtures.js';
import { runProviderContract } from '../cases/provider-contract.case.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let fake: FakeOpenAiImages;
let provider: MediaProvider;
beforeAll(async () => {
  fake = await startFakeOpenAiImages();
  provider = createOpenAiImagesProvider({ id: 'oai', baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await fake?.close();
});

const any = asBody;

const jobOf = jobOfPlan;
const pic = (body: Record<string, unknown>, upstream = 'gpt-image-2') => jobOf(planPicTask(any({ model: 'pic', prompt: 'a fox', ...body })), upstream);
const mc = (body: Record<string, unknown>, upstream = 'gpt-image-2') =>
  jobOf(planModelCenterTask(any({ model: 'imagegen-5.0', prompt: 'a fox', ...body })), upstream);

/** Reference images are served from memory: the provider reads them through ctx.readMedia. */
const refs = new Map<string, Buffer>();
const context = (): ProviderContext =>
  providerContext({
    readMedia: async (ref) => refs.get(ref.url) ?? Promise.reject(new Error(`no such medium ${ref.url}`)),
    mediaUrl: (ref) => ref.url,
  });

runProviderContract('openai-images (against the fake Images API)', {
  make: () => provider,
  jobs: [
    { name: 'pic 1:1 on gpt-image-2', job: () => pic({}) },
    { name: 'pic 3:2 on gpt-image-1', job: () => pic({ size: '3:2' }, 'gpt-image-1') },
    { name: 'Model Center image, exact WxH', job: () => mc({ size: '1280x720' }) },
  ],
  longJob: () => pic({ prompt: 'a fox [hold]' }),
  unrecoverableJob: () => pic({ prompt: 'an [unsafe] fox' }),
});

const startError = async (job: ProviderJob): Promise<unknown> =>
  provider.start!(job, context()).then(
    () => undefined,
    (e: unknown) => e,
  );
const lastSent = () => fake.requests.at(-1)!;

describe('openai-images: the mapping table', () => {
  it.each([
    // request -> upstream model -> size sent (and made)
    ['pic 1:1 1k', pic({}), '1024x1024'],
    ['pic-2 16:9 2k: exact', jobOf(planPicTask(any({ model: 'pic-2', prompt: 'x', size: '16:9', resolution: '2k' })), 'gpt-image-2'), '2048x1152'],
    ['pic-pro 1:1 4k: scaled into 8,294,400 pixels', jobOf(planPicTask(any({ model: 'pic-pro', prompt: 'x', resolution: '4k' })), 'gpt-image-2'), '2880x2880'],
    [
      'pic-pro 16:9 4k: the 3840x2160 maximum',
      jobOf(planPicTask(any({ model: 'pic-pro', prompt: 'x', size: '16:9', resolution: '4k' })), 'gpt-image-2'),
      '3840x2160',
    ],
    ['pic 16:9 1k: scaled up to 655,360 pixels, multiples of 16', pic({ size: '16:9' }), '1088x608'],
    ['pic 21:9 on gpt-image-1: nearest fixed size', pic({ size: '21:9' }, 'gpt-image-1'), '1536x1024'],
    ['pic 9:16 on gpt-image-1-mini', pic({ size: '9:16' }, 'gpt-image-1-mini'), '1024x1536'],
    ['pic 16:9 on dall-e-3', pic({ size: '16:9' }, 'dall-e-3'), '1792x1024'],
    ['pic 1:1 on dall-e-2', pic({}, 'dall-e-2'), '1024x1024'],
    ['Model Center 512x512 on dall-e-2', mc({ size: '512x512' }, 'dall-e-2'), '512x512'],
    ['Model Center aspect_ratio 2:3 on gpt-image-2', mc({ aspect_ratio: '2:3' }), '688x1024'],
  ])('%s -> size %s', async (_name, job, size) => {
    expect(provider.refuse!(job)).toBeUndefined();
    const out = await provider.start!(job, context());
    expect(out.state).toBe('done');
    const sent = lastSent();
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.fields).toMatchObject({ model: job.upstreamModel, prompt: paramFields(job.params).prompt, size, n: '1' });
    const gpt = job.upstreamModel.startsWith('gpt-image');
    // GPT image models: never response_format, output_format png; dall-e: b64_json asked, no output_format
    expect(sent.fields.response_format).toBe(gpt ? undefined : 'b64_json');
    expect(sent.fields.output_format).toBe(gpt ? 'png' : undefined);
    const file = (out as Extract<typeof out, { state: 'done' }>).output.files[0]!;
    const [w, h] = size.split('x').map(Number);
    expect(file).toMatchObject({ contentType: 'image/png', width: w, height: h });
    expect(await sharp((file as { data: Buffer }).data).metadata()).toMatchObject({ format: 'png', width: w, height: h });
  });

  it('reference images go to /images/edits as image[] parts, read through ctx.readMedia', async () => {
    refs.set('http://media.test/a.png', await image(64, 64, 'png'));
    refs.set('http://media.test/b.jpg', await image(40, 30, 'jpeg'));
    const job = mc({ image_urls: ['http://media.test/a.png'], reference_images: ['http://media.test/b.jpg'], quality: 'high' }, 'gpt-image-1');
    job.media.images[1]!.facts = { kind: 'image', format: 'jpeg', bytes: 1 };
    const out = await provider.start!(job, context());
    expect(out.state).toBe('done');
    const sent = lastSent();
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.fields).toMatchObject({ model: 'gpt-image-1', quality: 'high', size: '1024x1024' });
    expect(sent.images.map((i) => [i.field, i.type])).toEqual([
      ['image[]', 'image/png'],
      ['image[]', 'image/jpeg'],
    ]);
  });

  it.each([
    ['dall-e-3 takes no references', pic({ image_urls: ['http://media.test/a.png'] }, 'dall-e-3'), 'image_urls[0]', /dall-e-3 takes no reference images/],
    [
      'dall-e-2 takes one reference',
      pic({ image_urls: ['http://media.test/a.png', 'http://media.test/a.png'] }, 'dall-e-2'),
      'image_urls[1]',
      /at most 1 reference image$/,
    ],
    ['dall-e-2 makes squares only', pic({ size: '16:9' }, 'dall-e-2'), 'size', /size 16:9: dall-e-2 makes square images only/],
    [
      'fixed sizes stop at their long side',
      jobOf(planPicTask(any({ model: 'pic-2', prompt: 'x', resolution: '2k' })), 'gpt-image-1'),
      'resolution',
      /resolution 2k: gpt-image-1 makes images up to 1536 px/,
    ],
    [
      'an exact size the model does not make',
      mc({ size: '1000x1000' }),
      'size',
      /size 1000x1000: gpt-image-2 cannot make it \(both sides must be multiples of 16\)/,
    ],
    ['an exact size a fixed-size model does not make', mc({ size: '1280x720' }, 'gpt-image-1'), 'size', /makes 1024x1024, 1536x1024, 1024x1536 only/],
    ['a ratio beyond 3:1', mc({ aspect_ratio: '4:1' }), 'aspect_ratio', /aspect_ratio 4:1: gpt-image-2 makes aspect ratios up to 3:1/],
    ['n other than 1', mc({ n: 2 }), 'n', /a task makes one image/],
    ['a quality the model does not take', mc({ quality: 'hd' }), 'quality', /quality hd: gpt-image-2 takes low, medium, high, auto/],
    ['a field the API has no input for', mc({ style: 'ink' }), 'style', /no such input/],
    ['a reference video', mc({ reference_videos: ['http://media.test/v.mp4'] }), 'reference_videos', /no such input/],
  ])('%s: refused naming %s, and the start refuses it too without calling', async (_name, job, field, message) => {
    const refusal = provider.refuse!(job);
    expect(refusal).toMatchObject({ field });
    expect(refusal!.message).toMatch(message);
    const before = fake.requests.length;
    const err = await startError(job);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(fake.requests.length).toBe(before);
  });
});

describe('openai-images: failures', () => {
  it("a prompt the safety system refuses is the caller's failure, saying so", async () => {
    for (const model of ['gpt-image-2', 'dall-e-3']) {
      const err = await startError(pic({ prompt: 'an [unsafe] fox' }, model));
      expect(err).toBeInstanceOf(UnrecoverableError);
      expect(err).not.toBeInstanceOf(ChannelError);
      expect((err as Error).message).toMatch(/the prompt was refused by the upstream's safety system \((moderation_blocked|content_policy_violation)\)/);
    }
  });

  it("another refusal by the API is the caller's failure naming the request field", async () => {
    // png is asked of dall-e-2 edits: a JPEG reference is refused by the API, naming image[0]
    refs.set('http://media.test/c.jpg', await image(64, 64, 'jpeg'));
    const job = pic({ image_urls: ['http://media.test/c.jpg'] }, 'dall-e-2');
    job.media.images[0]!.facts = { kind: 'image', format: 'jpeg', bytes: 1 };
    const err = await startError(job);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'image_urls[0]' });
    expect((err as Error).message).toMatch(/^image_urls\[0\]: Invalid file/);
  });

  it.each([
    ['429 insufficient_quota', QUOTA_ERROR, /no quota left \(HTTP 429 insufficient_quota\)/, undefined],
    ['429 rate limit with retry-after', rateLimited('7'), /rate limiting the gateway \(HTTP 429\)/, 7000],
    ['500', SERVER_ERROR, /failed \(HTTP 500\)/, undefined],
    [
      '401',
      { status: 401, error: { message: 'Incorrect API key provided: sk-abc12345678.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      /refused the gateway's credentials \(HTTP 401\)/,
      undefined,
    ],
    ['a reset connection', 'reset', /broke before its answer was complete/, undefined],
  ] as const)("%s is the channel's fault", async (_name, answer, message, retryAfterMs) => {
    fake.script(answer);
    const err = await startError(pic({}));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
    expect((err as ChannelError).retryAfterMs).toBe(retryAfterMs);
    expect((err as Error).message).toContain('"oai"');
    expect((err as Error).message).not.toContain(fake.baseUrl);
    expect((err as Error).message).not.toContain('127.0.0.1');
    expect((err as Error).message).not.toContain(fake.apiKey);
  });

  it("a model name the route gets wrong is the channel's fault (the next candidate may serve it)", async () => {
    const err = await startError(pic({}, 'gpt-image-9'));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/does not serve model "gpt-image-9"/);
  });

  it("a call longer than timeoutMs is the channel's fault, and the connection is dropped", async () => {
    const slow = createOpenAiImagesProvider({ id: 'slow', baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 200 });
    const before = fake.dropped;
    const err = await slow.start!(pic({ prompt: 'x [hold]' }), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await slow.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).code).toBe('upstream_timeout');
    await expect.poll(() => fake.dropped).toBeGreaterThan(before);
  });

  it("each call sends the task's Idempotency-Key and the key as a bearer token", async () => {
    const job = { ...pic({}), generation: 2 };
    await provider.start!(job, context());
    expect(lastSent().headers).toMatchObject({ authorization: `Bearer ${fake.apiKey}`, 'idempotency-key': `${job.taskId}.2` });
  });
});
