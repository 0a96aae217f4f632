import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planClipTask } from '../../src/contract/clip.js';
import { planPicTask } from '../../src/contract/pic.js';
import { createFalProvider } from '../../src/providers/fal/index.js';
import { filesOf } from '../../src/providers/fal/reply.js';
import { ChannelError, UnrecoverableError, type CheckResult, type MediaProvider, type ProviderContext, type ProviderJob } from '../../src/providers/types.js';
import type { UpstreamRef } from '../../src/contract/task-request.js';
import { FAL_MODELS } from '../helpers/fal-mapping.js';
import { exhaustedBalance, rateLimited, startFakeFal, type FakeFal } from '../fakes/fal.js';
import { runProviderContract } from '../cases/provider-contract.case.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

let fake: FakeFal;
let provider: MediaProvider;
beforeAll(async () => {
  fake = await startFakeFal();
  provider = createFalProvider({ id: 'falq', baseUrl: fake.baseUrl, apiKey: fake.apiKey, models: FAL_MODELS, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await fake?.close();
});

const any = asBody;
const jobOf = jobOfPlan;
const pic = (body: Record<string, unknown>, upstream = 'fal-ai/flux/dev') => jobOf(planPicTask(any({ model: 'pic', prompt: 'a fox', ...body })), upstream);
const clip = (body: Record<string, unknown>, upstream = 'fal-ai/veo3') =>
  jobOf(planClipTask(any({ model: 'clip_3_1_fast', prompt: 'a fox runs', ...body })), upstream);

const context = (): ProviderContext =>
  providerContext({
    readMedia: async () => {
      throw new Error('fal gets URLs');
    },
    mediaUrl: (ref) => `${ref.url}?signed`,
  });

runProviderContract('fal (against the fake fal queue)', {
  make: () => provider,
  jobs: [
    { name: 'pic 16:9 on flux', job: () => pic({ size: '16:9' }) },
    { name: 'clip on veo3', job: () => clip({}) },
  ],
  longJob: () => pic({ prompt: 'a fox [hold]' }),
  unrecoverableJob: () => pic({ prompt: 'a [nsfw] fox' }),
});

async function started(job: ProviderJob): Promise<UpstreamRef> {
  const out = await provider.start!(job, context());
  expect(out.state).toBe('started');
  return (out as Extract<typeof out, { state: 'started' }>).ref;
}
/** Checks until the generation ends; the progress of each pending look, in order. */
async function finish(job: ProviderJob, ref: UpstreamRef): Promise<{ end: CheckResult; progress: (number | undefined)[] }> {
  const progress: (number | undefined)[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await provider.check!(ref, job, context());
    if (r.state !== 'pending') return { end: r, progress };
    progress.push(r.progress);
  }
  throw new Error('never ended');
}
const lastSubmit = () => fake.submits.at(-1)!;

describe('fal: the mapping table', () => {
  it.each([
    ["pic, no size: the mapping's default 1:1", pic({}), { prompt: 'a fox', image_size: 'square_hd', num_images: 1, enable_safety_checker: true }],
    ['pic 16:9', pic({ size: '16:9' }), { image_size: 'landscape_16_9' }],
    ['pic 3:4, resolution 1k accepted (nothing sent)', pic({ size: '3:4', resolution: '1k' }), { image_size: 'portrait_4_3' }],
    [
      'clip 9:16 1080p, 8 s',
      clip({ aspect_ratio: '9:16', resolution: '1080p' }),
      { prompt: 'a fox runs', duration: '8s', aspect_ratio: '9:16', resolution: '1080p', generate_audio: false },
    ],
    [
      "clip first frame as one URL (the caller's, as ctx.mediaUrl gives it)",
      clip({ first_image: 'http://media.test/f.png' }, 'fal-ai/veo3/image-to-video'),
      { image_url: 'http://media.test/f.png?signed' },
    ],
  ])('%s', async (_name, job, sent) => {
    expect(provider.refuse!(job)).toBeUndefined();
    await started(job);
    expect(lastSubmit().model).toBe(job.upstreamModel);
    expect(lastSubmit().input).toMatchObject(sent);
    if (job.family === 'pic') expect(Object.keys(lastSubmit().input).sort()).toEqual(['enable_safety_checker', 'image_size', 'num_images', 'prompt']);
  });

  it.each(
    (
      [
        ['a size the mapping has no value for', pic({ size: '21:9' }), 'size', /size 21:9: the fal model fal-ai\/flux\/dev takes 1:1, 16:9, 9:16, 4:3, 3:4/],
        [
          'a resolution the model does not make',
          jobOf(planPicTask(any({ model: 'pic-2', prompt: 'x', resolution: '2k' })), 'fal-ai/flux/dev'),
          'resolution',
          /resolution 2k: the fal model fal-ai\/flux\/dev makes 1k only/,
        ],
        ['a field with no input (reference images on flux)', pic({ image_urls: ['http://media.test/a.png'] }), 'image_urls', /no input for it/],
        [
          'a last frame where the model takes none',
          clip({ first_image: 'http://media.test/f.png', last_image: 'http://media.test/l.png' }, 'fal-ai/veo3/image-to-video'),
          'last_image',
          /no input for it/,
        ],
        ['a model with no mapping', pic({}, 'fal-ai/unknown-model'), 'model', /no input mapping for fal-ai\/unknown-model/],
      ] as [string, ProviderJob, string, RegExp][]
    ).map(([name, job, field, message]) => [name, field, job, message] as const),
  )('%s: refused naming %s, and the start refuses it without calling', async (_name, field, job, message) => {
    const refusal = provider.refuse!(job);
    expect(refusal).toMatchObject({ field });
    expect(refusal!.message).toMatch(message);
    const before = fake.submits.length;
    const err = await provider.start!(job, context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(fake.submits.length).toBe(before);
  });
});

describe('fal: the queue protocol', () => {
  it('a model with a sub-path is followed by the URLs fal returned (never rebuilt from the model id)', async () => {
    const job = clip({ first_image: 'http://media.test/f.png' }, 'fal-ai/veo3/image-to-video');
    const ref = await started(job);
    expect(ref.data).toMatchObject({ statusUrl: `${fake.baseUrl}/fal-ai/veo3/requests/${ref.id}/status` });
    const { end } = await finish(job, ref);
    expect(end.state).toBe('completed');
    const files = (end as Extract<CheckResult, { state: 'completed' }>).output.files;
    expect(files).toEqual([{ url: `${fake.baseUrl}/files/${ref.id}/output.mp4`, kind: 'video' }]);
    expect(fake.notFound).toEqual([]);
    expect(fake.calls.filter((c) => c.endsWith(ref.id))).toEqual([`status ${ref.id}`, `status ${ref.id}`, `status ${ref.id}`, `result ${ref.id}`]);
  });

  it('queue position is progress rising as the position falls, then the time estimate (undefined)', async () => {
    const job = pic({ prompt: 'a fox [queue:3]' });
    const out = await provider.start!(job, context());
    expect(out).toMatchObject({ state: 'started', progress: 6 });
    const { end, progress } = await finish(job, (out as Extract<typeof out, { state: 'started' }>).ref);
    expect(end.state).toBe('completed');
    expect(progress).toEqual([6, 7, 8, 9, undefined]);
  });

  it('cancel: CANCELLATION_REQUESTED while running, ALREADY_COMPLETED after (both fine)', async () => {
    const job = pic({ prompt: 'a fox [hold]' });
    const ref = await started(job);
    await provider.check!(ref, job, context());
    await provider.cancel!(ref, job, context());
    expect(fake.calls).toContain(`cancel ${ref.id}`);
    const { end } = await finish(job, ref);
    expect(end.state).toBe('failed');
    await expect(provider.cancel!(ref, job, context())).resolves.toBeUndefined();
  });
});

describe('fal: failures', () => {
  it('an input the model refuses shows only on the result (status COMPLETED): the task fails naming the request field', async () => {
    const job = clip({}, 'fal-ai/kling-video/v2/master/text-to-video');
    const { end } = await finish(job, await started(job));
    expect(end.state).toBe('failed');
    const err = (end as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'duration' });
    expect(err.message).toMatch(/^duration: value is not a valid enumeration member; permitted: '5', '10'/);
  });

  it("a content checker's refusal fails the task saying so", async () => {
    const job = pic({ prompt: 'a [nsfw] fox' });
    const { end } = await finish(job, await started(job));
    const err = (end as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.message).toMatch(/refused by the upstream's content checker \(content_policy_violation\) on prompt/);
  });

  it('an image the safety checker flagged (200, blacked out, has_nsfw_concepts [true]) is a refusal of the prompt, not a result (G436)', async () => {
    const job = pic({ prompt: 'a fox [nsfw-output]' });
    const { end } = await finish(job, await started(job));
    expect(end.state).toBe('failed');
    const err = (end as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err).toMatchObject({ param: 'prompt' });
    expect(err.message).toMatch(/held back by the upstream model's safety checker: the fal model fal-ai\/flux\/dev flagged every image it made/);
  });

  it('a flagged image among others is left out; flags that do not line up with the files hold back every one', () => {
    const img = (n: number) => ({ url: `https://v3.fal.media/files/${n}.png` });
    const answer = (flags: unknown) => ({ images: [img(0), img(1), img(2)], has_nsfw_concepts: flags });
    expect(filesOf('fal', answer([false, true, false]), 'images[].url', 'image', 'm').map((f) => f.url)).toEqual([img(0).url, img(2).url]);
    expect(filesOf('fal', answer([false, false, false]), 'images[].url', 'image', 'm')).toHaveLength(3);
    expect(filesOf('fal', answer(undefined), 'images[].url', 'image', 'm')).toHaveLength(3);
    expect(() => filesOf('fal', answer([true]), 'images[].url', 'image', 'm')).toThrow(UnrecoverableError);
    expect(() => filesOf('fal', answer([true, true, true]), 'images[].url', 'image', 'm')).toThrow(/flagged every image/);
  });

  it('a result answered inline (sync_mode: data: URIs, nothing on the CDN) completes with those files', async () => {
    const models = { ...FAL_MODELS, 'fal-ai/flux/dev': { ...FAL_MODELS['fal-ai/flux/dev']!, constants: { num_images: 1, sync_mode: true } } };
    const inline = createFalProvider({ id: 'falq', baseUrl: fake.baseUrl, apiKey: fake.apiKey, models, timeoutMs: 10_000 });
    try {
      const job = pic({ size: '16:9' });
      const out = await inline.start!(job, context());
      const ref = (out as Extract<typeof out, { state: 'started' }>).ref;
      let end: CheckResult = { state: 'pending' };
      for (let i = 0; i < 20 && end.state === 'pending'; i++) end = await inline.check!(ref, job, context());
      expect(end.state).toBe('completed');
      const [file] = (end as Extract<CheckResult, { state: 'completed' }>).output.files;
      expect(file).toMatchObject({ kind: 'image', url: expect.stringMatching(/^data:image\/png;base64,iVBOR/) });
    } finally {
      await inline.close?.();
    }
  });

  it("a model that crashed is a failed generation (a new one may start), not the caller's fault", async () => {
    const job = pic({ prompt: 'a [crash] fox' });
    const { end } = await finish(job, await started(job));
    const err = (end as Extract<CheckResult, { state: 'failed' }>).error;
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect(err).not.toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(/failed \(HTTP 500 runner_server_error\)/);
  });

  it('a request fal no longer has (expired) is a failed generation', async () => {
    const job = pic({ prompt: 'a fox [queue:5]' });
    const ref = await started(job);
    fake.expire(ref.id);
    const r = await provider.check!(ref, job, context());
    expect(r.state).toBe('failed');
    expect((r as Extract<CheckResult, { state: 'failed' }>).error.message).toMatch(/no longer has the request \(HTTP 404\)/);
  });

  it.each([
    ['403 exhausted balance', exhaustedBalance, /refused the gateway's credentials \(HTTP 403\)/, undefined],
    ['429 with retry-after', rateLimited('9'), /rate limiting the gateway \(HTTP 429\)/, 9000],
    ['503', { status: 503, body: { detail: 'Service Unavailable' } }, /failed \(HTTP 503\)/, undefined],
    ['a reset connection', 'reset' as const, /broke before its answer was complete/, undefined],
  ])("a submit answered %s is the channel's fault", async (_name, answer, message, retryAfterMs) => {
    fake.script('submit', answer);
    const err = await provider.start!(pic({}), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(message);
    expect((err as ChannelError).retryAfterMs).toBe(retryAfterMs);
    expect((err as Error).message).toContain('"falq"');
    expect((err as Error).message).not.toContain('127.0.0.1');
    expect((err as Error).message).not.toContain(fake.apiKey);
  });

  it('a status or result look the channel cannot answer now is thrown (looked at again), with Retry-After', async () => {
    const job = pic({});
    const ref = await started(job);
    fake.script('status', rateLimited('4'));
    await expect(provider.check!(ref, job, context())).rejects.toMatchObject({ name: 'ChannelError', retryAfterMs: 4000 });
    fake.script('result', { status: 502, body: { detail: 'Bad Gateway' } });
    let thrown: unknown;
    for (let i = 0; i < 5 && thrown === undefined; i++) {
      const r = await provider.check!(ref, job, context()).catch((e: unknown) => {
        thrown = e;
      });
      expect(r?.state ?? 'thrown').not.toBe('completed');
    }
    expect(thrown).toBeInstanceOf(ChannelError);
    expect((thrown as Error).message).toMatch(/HTTP 502/);
    const { end } = await finish(job, ref);
    expect(end.state).toBe('completed');
  });

  it("a model id fal does not know is the channel's fault (the route is misconfigured)", async () => {
    const other = createFalProvider({ id: 'falq', baseUrl: fake.baseUrl, apiKey: fake.apiKey, models: { 'fal-ai/nope': FAL_MODELS['fal-ai/flux/dev']! } });
    const err = await other.start!(pic({}, 'fal-ai/nope'), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await other.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/does not serve model "fal-ai\/nope"/);
  });

  it("sends the key as `Authorization: Key`; a wrong key is the channel's fault", async () => {
    await started(pic({}));
    expect(lastSubmit().headers.authorization).toBe(`Key ${fake.apiKey}`);
    const wrong = createFalProvider({ id: 'falq', baseUrl: fake.baseUrl, apiKey: 'bad:key', models: FAL_MODELS });
    const err = await wrong.start!(pic({}), context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    await wrong.close?.();
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as Error).message).toMatch(/HTTP 401/);
  });
});
