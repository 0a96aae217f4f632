import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planClipTask } from '../../src/contract/clip.js';
import { planPicTask } from '../../src/contract/pic.js';
import { createReplicateProvider } from '../../src/providers/replicate/index.js';
import { urlsOfOutput } from '../../src/providers/replicate/reply.js';
import { ChannelError, UnrecoverableError, type CheckResult, type MediaProvider, type ProviderContext, type ProviderJob } from '../../src/providers/types.js';
import { PAYMENT_REQUIRED, SERVER_ERROR, startFakeReplicate, throttled, VIDEO_VERSION, type FakeReplicate } from '../fakes/replicate.js';
import { runProviderContract } from '../cases/provider-contract.case.js';
import { REPLICATE_MODELS } from '../helpers/replicate-models.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let fake: FakeReplicate;
let provider: MediaProvider;
beforeAll(async () => {
  fake = await startFakeReplicate();
  provider = createReplicateProvider({ id: 'rep', baseUrl: fake.baseUrl, apiKey: fake.apiKey, models: REPLICATE_MODELS as never, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await fake?.close();
});

const any = asBody;
const jobOf = jobOfPlan;
const pic = (body: Record<string, unknown> = {}, upstream = 'flux-schnell') => jobOf(planPicTask(any({ model: 'pic-2', prompt: 'a fox', ...body })), upstream);
const clip = (body: Record<string, unknown> = {}, upstream = 'video-01') =>
  jobOf(planClipTask(any({ model: 'clip_3_1_fast', prompt: 'a fox runs', ...body })), upstream);

/** Caller media reach the upstream as the URLs ctx.mediaUrl gives (signed URLs of uploaded assets). */
const signed = (url: string): string => `https://gateway.example/signed?u=${encodeURIComponent(url)}`;
const context = (progress: number[] = []): ProviderContext =>
  providerContext({
    reportProgress: (p) => progress.push(p),
    readMedia: async () => Buffer.alloc(0),
    mediaUrl: (ref) => signed(ref.url),
  });

runProviderContract('replicate (against the fake predictions API)', {
  make: () => provider,
  jobs: [
    { name: 'pic-2 16:9 on flux-schnell (an official model)', job: () => pic({ size: '16:9' }) },
    { name: 'clip with a first frame on a version', job: () => clip({ first_image: 'https://media.example/first.png' }) },
  ],
  longJob: () => pic({ prompt: 'a fox [hold]' }),
  unrecoverableJob: () => pic({ prompt: 'a fox [nsfw]' }),
  context: { mediaUrl: (ref) => signed(ref.url) },
});

const started = async (job: ProviderJob) => {
  const s = await provider.start!(job, context());
  if (s.state !== 'started') throw new Error('expected a started prediction');
  return s.ref;
};
const startError = (job: ProviderJob): Promise<unknown> =>
  provider.start!(job, context()).then(
    () => undefined,
    (e: unknown) => e,
  );
const lastCreate = () => fake.creates.at(-1)!;
const lastRequest = () => fake.requests.filter((r) => r.method === 'POST').at(-1)!;

describe('replicate: the mapping table', () => {
  it.each([
    [
      'pic-2 16:9: size -> aspect_ratio, constants sent',
      pic({ size: '16:9' }),
      '/v1/models/black-forest-labs/flux-schnell/predictions',
      { prompt: 'a fox', aspect_ratio: '16:9', output_format: 'png', num_outputs: 1, go_fast: true },
    ],
    [
      "pic-2 without size: nothing for aspect_ratio (the model's 1:1)",
      pic(),
      '/v1/models/black-forest-labs/flux-schnell/predictions',
      { prompt: 'a fox', output_format: 'png', num_outputs: 1, go_fast: true },
    ],
    [
      'pic-2 resolution 1k: honoured, nothing sent',
      pic({ resolution: '1k' }),
      '/v1/models/black-forest-labs/flux-schnell/predictions',
      { prompt: 'a fox', output_format: 'png', num_outputs: 1, go_fast: true },
    ],
    [
      'clip: duration, first_image as the URL ctx.mediaUrl gives; 16:9 720p honoured',
      clip({ first_image: 'https://media.example/f.png' }),
      '/v1/predictions',
      { prompt: 'a fox runs', duration: 8, first_frame_image: signed('https://media.example/f.png'), prompt_optimizer: false },
    ],
  ])('%s', async (_name, job, path, input) => {
    expect(provider.refuse!(job)).toBeUndefined();
    await started(job);
    expect(lastRequest().path).toBe(path);
    expect(lastCreate().input).toEqual(input);
    if (path === '/v1/predictions') expect(lastCreate().version).toBe(VIDEO_VERSION);
  });

  it.each([
    ['a resolution the mapping does not list', pic({ resolution: '2k' }), 'resolution', /^resolution 2k: black-forest-labs\/flux-schnell takes 1k here$/],
    ['a reference image (no input for it)', pic({ image_urls: ['https://media.example/r.png'] }), 'image_urls[0]', /has no input for image_urls\[0\]/],
    ['clip 9:16 on a model listed for 16:9 only', clip({ aspect_ratio: '9:16' }), 'aspect_ratio', /aspect_ratio 9:16: .* takes 16:9 here/],
    ['clip 1080p', clip({ resolution: '1080p' }), 'resolution', /resolution 1080p/],
    [
      'a last frame',
      clip({ first_image: 'https://media.example/f.png', last_image: 'https://media.example/l.png' }),
      'last_image',
      /has no input for last_image/,
    ],
    ['an image model routed to a video model', pic({}, 'video-01'), 'model', /makes images; .* makes videos/],
    ['a route model without a mapping', pic({}, 'flux-pro'), 'model', /no mapping for "flux-pro"/],
  ])('%s: refused naming %s, and the start refuses it without a create', async (_name, job, field, message) => {
    const refusal = provider.refuse!(job);
    expect(refusal).toMatchObject({ field });
    expect(refusal!.message).toMatch(message);
    const before = fake.creates.length;
    const err = await startError(job);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: field });
    expect(fake.creates.length).toBe(before);
  });

  it('outputs: a URL, a list of URLs or an object of them; the first is the file', () => {
    expect(urlsOfOutput('https://replicate.delivery/a.mp4')).toEqual(['https://replicate.delivery/a.mp4']);
    expect(urlsOfOutput(['https://r.d/0.png', 'https://r.d/1.png'])).toEqual(['https://r.d/0.png', 'https://r.d/1.png']);
    expect(urlsOfOutput({ video: 'https://r.d/v.mp4', seed: 42, text: 'not a url' })).toEqual(['https://r.d/v.mp4']);
    // a file answered inline, as the official client takes it too (G437)
    expect(urlsOfOutput(['data:image/webp;base64,UklGR', 'https://r.d/1.png'])).toEqual(['data:image/webp;base64,UklGR', 'https://r.d/1.png']);
  });
});

describe('replicate: the prediction lifecycle', () => {
  it('creates without Prefer: wait, with the bearer token; checks read progress from the tqdm logs, then the output file', async () => {
    const ref = await started(pic({ size: '16:9' }));
    const create = lastRequest();
    expect(create.headers.prefer).toBeUndefined();
    expect(create.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(fake.preferWaits).toBe(0);
    expect(fake.predictions.get(ref.id)!.status).toBe('starting'); // the create did not wait for it
    const results: CheckResult[] = [];
    for (let i = 0; i < 3; i++) results.push(await provider.check!(ref, pic(), context()));
    expect(results.map((r) => r.state)).toEqual(['pending', 'pending', 'completed']);
    expect(results.slice(0, 2).map((r) => (r as { progress?: number }).progress)).toEqual([25, 50]);
    const file = (results[2] as Extract<CheckResult, { state: 'completed' }>).output.files[0]!;
    expect(file).toMatchObject({ kind: 'image', trusted: true });
    expect('url' in file && file.url).toMatch(/\/files\/.+\/out-0\.png$/);
    expect('url' in file && file.headers).toBeUndefined(); // delivery URLs need no token
  });

  it('cancel reaches the prediction; the next look sees it canceled; a prediction already gone is nothing to cancel', async () => {
    const ref = await started(pic({ prompt: 'a fox [forever]' }));
    expect(await provider.check!(ref, pic(), context())).toMatchObject({ state: 'pending', progress: 1 });
    await provider.cancel!(ref, pic(), context());
    expect(fake.cancels).toContain(ref.id);
    const after = await provider.check!(ref, pic(), context());
    expect(after.state).toBe('failed');
    expect((after as { error: Error }).error.message).toMatch(/canceled there/);
    await expect(provider.cancel!({ id: 'gone0000000000000000000000' }, pic(), context())).resolves.toBeUndefined();
  });
});

describe('replicate: failures', () => {
  it('a refused input that a request field maps to fails the task naming that field', async () => {
    const err = await startError(pic({ size: '16:9' }, 'flux-misfit'));
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'size' });
    expect((err as Error).message).toMatch(/^size: megapixels must be one of the following: "1", "0.25"$/);
  });

  it.each([
    [
      "a refused constant (the mapping's fault)",
      'flux-bad-constant',
      /refused the input this gateway's mapping for "flux-bad-constant" sends .*HTTP 422.*num_outputs/,
    ],
    ['a model that is not there (404)', 'no-such-model', /has no model acme\/nothing-here .*HTTP 404/],
    ['a version that is not there (422 without invalid_fields)', 'no-such-version', /HTTP 422\): The specified version does not exist/],
  ])("%s is the channel's fault", async (_name, upstream, message) => {
    const err = await startError(pic({}, upstream));
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
  });

  it.each([
    ['402 insufficient credit', PAYMENT_REQUIRED, /no credit left \(HTTP 402\)/, undefined],
    ['429 throttled, with retry-after', throttled(7), /rate limiting the gateway \(HTTP 429\): Request was throttled/, 7000],
    ['500', SERVER_ERROR, /failed \(HTTP 500\)/, undefined],
    ['a reset connection', 'reset', /broke before its answer was complete/, undefined],
  ] as const)("a create answered %s is the channel's fault", async (_name, answer, message, retryAfterMs) => {
    fake.script(answer);
    const before = fake.creates.length;
    const err = await startError(pic());
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
    expect((err as ChannelError).retryAfterMs).toBe(retryAfterMs);
    expect((err as Error).message).toContain('"rep"');
    for (const secret of [fake.baseUrl, '127.0.0.1', fake.apiKey]) expect((err as Error).message).not.toContain(secret);
    expect(fake.creates.length).toBe(before);
  });

  it("a wrong token is the channel's fault, and the token is never quoted", async () => {
    const wrong = createReplicateProvider({ id: 'wrong', baseUrl: fake.baseUrl, apiKey: 'r8_wrongwrongwrong', models: REPLICATE_MODELS as never });
    const err = await wrong.start!(pic(), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await wrong.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/refused the gateway's credentials \(HTTP 401\)/);
    expect((err as Error).message).not.toContain('r8_wrongwrongwrong');
  });

  it('a check answered 429 is looked at again later, after the Retry-After; a prediction the upstream no longer has is failed', async () => {
    const ref = await started(pic());
    fake.script(throttled(3));
    const err = await provider.check!(ref, pic(), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).retryAfterMs).toBe(3000);
    const gone = await provider.check!({ id: 'gone0000000000000000000000' }, pic(), context());
    expect(gone.state).toBe('failed');
    expect((gone as { error: Error }).error).not.toBeInstanceOf(UnrecoverableError);
  });

  it('a prediction failed by the safety checker fails the task; a model crash may be tried again', async () => {
    const nsfw = await started(pic({ prompt: 'x [nsfw]' }));
    const crash = await started(pic({ prompt: 'x [crash]' }));
    const end = async (ref: typeof nsfw) => {
      for (;;) {
        const r = await provider.check!(ref, pic(), context());
        if (r.state === 'failed') return r.error;
        expect(r.state).toBe('pending');
      }
    };
    const safety = await end(nsfw);
    expect(safety).toBeInstanceOf(UnrecoverableError);
    expect(safety.message).toMatch(/held back by the upstream model's safety checker: NSFW content detected/);
    const crashed = await end(crash);
    expect(crashed).not.toBeInstanceOf(UnrecoverableError);
    expect(crashed.message).toMatch(/the prediction failed: CUDA out of memory/);
  });

  it("a create longer than timeoutMs is the channel's fault", async () => {
    const slow = createReplicateProvider({ id: 'slow', baseUrl: fake.baseUrl, apiKey: fake.apiKey, models: REPLICATE_MODELS as never, timeoutMs: 200 });
    const err = await slow.start!(pic({ prompt: 'x [hold]' }), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await slow.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).code).toBe('upstream_timeout');
  });
});
