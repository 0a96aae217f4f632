/**
 * The fake Images API (test/fakes/openai-images.ts) speaks the real protocol: the official `openai`
 * client (no retries unless asked) generates and edits through it, reads its base64 images and
 * `x-request-id`, and maps its errors to the client's own classes with the API's status, code and
 * param, including the traps the provider must avoid (`response_format` to a GPT image model,
 * sizes a model does not make) and the failures it must classify (moderation, quota, rate limits).
 */
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTA_ERROR, rateLimited, startFakeOpenAiImages, type FakeOpenAiImages } from '../fakes/openai-images.js';
import { image } from '../helpers/media-fixtures.js';

let fake: FakeOpenAiImages;
let client: OpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAiImages();
  client = new OpenAI({ apiKey: fake.apiKey, baseURL: fake.baseUrl, maxRetries: 0, timeout: 10_000 });
});
afterAll(async () => {
  await fake?.close();
});

const errorOf = async (p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
};

describe('the official openai client against the fake Images API', () => {
  it('generates a gpt-image-2 image of a free WxH size, as base64, with a request id', async () => {
    const { data, response, request_id } = await client.images
      .generate({ model: 'gpt-image-2', prompt: 'a lighthouse', size: '1536x864', output_format: 'jpeg' })
      .withResponse();
    expect(request_id).toMatch(/^req_/);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('5000');
    expect(data.output_format).toBe('jpeg');
    const bytes = Buffer.from(data.data![0]!.b64_json!, 'base64');
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'jpeg', width: 1536, height: 864 });
  });

  it('edits with several reference images sent as image[] parts', async () => {
    const files = await Promise.all(
      [image(64, 64, 'png'), image(48, 32, 'jpeg')].map(async (b, i) =>
        toFile(await b, `ref${i}.${i ? 'jpg' : 'png'}`, { type: i ? 'image/jpeg' : 'image/png' }),
      ),
    );
    const res = await client.images.edit({ model: 'gpt-image-1', prompt: 'combine them', image: files, size: '1536x1024' });
    expect(Buffer.from(res.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.images.map((i) => [i.field, i.type])).toEqual([
      ['image[]', 'image/png'],
      ['image[]', 'image/jpeg'],
    ]);
  });

  it('refuses response_format for GPT image models and sizes a model does not make, naming the param', async () => {
    const rf = await errorOf(client.images.generate({ model: 'gpt-image-1', prompt: 'x', response_format: 'b64_json' }));
    expect(rf).toBeInstanceOf(OpenAI.BadRequestError);
    expect(rf).toMatchObject({ status: 400, param: 'response_format', code: 'unknown_parameter', type: 'invalid_request_error' });
    for (const [model, size] of [
      ['gpt-image-2', '1000x1008'],
      ['gpt-image-2', '3840x1200'],
      ['gpt-image-2', '512x512'],
      ['gpt-image-1', '1792x1024'],
      ['dall-e-3', '1536x1024'],
    ] as const) {
      const err = await errorOf(client.images.generate({ model, prompt: 'x', size }));
      expect(err, `${model} ${size}`).toMatchObject({ status: 400, param: 'size' });
    }
    expect(await errorOf(client.images.generate({ model: 'dall-e-3', prompt: 'x', n: 2 }))).toMatchObject({ status: 400, param: 'n' });
  });

  it('dall-e models answer base64 when asked, a URL otherwise', async () => {
    const b64 = await client.images.generate({ model: 'dall-e-3', prompt: 'x', size: '1792x1024', response_format: 'b64_json' });
    expect(await sharp(Buffer.from(b64.data![0]!.b64_json!, 'base64')).metadata()).toMatchObject({ width: 1792, height: 1024 });
    const url = await client.images.generate({ model: 'dall-e-2', prompt: 'x', size: '256x256' });
    expect(url.data![0]!.url).toMatch(/^https:\/\//);
  });

  it("moderation, quota, rate limits and bad keys arrive as the client's error classes", async () => {
    expect(await errorOf(client.images.generate({ model: 'gpt-image-1', prompt: 'an [unsafe] thing' }))).toMatchObject({
      status: 400,
      code: 'moderation_blocked',
    });
    expect(await errorOf(client.images.generate({ model: 'dall-e-3', prompt: 'an [unsafe] thing' }))).toMatchObject({
      status: 400,
      code: 'content_policy_violation',
    });
    fake.script(QUOTA_ERROR);
    const quota = await errorOf(client.images.generate({ model: 'gpt-image-2', prompt: 'x' }));
    expect(quota).toBeInstanceOf(OpenAI.RateLimitError);
    expect(quota).toMatchObject({ code: 'insufficient_quota', type: 'insufficient_quota' });
    const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: fake.baseUrl, maxRetries: 0 });
    expect(await errorOf(bad.images.generate({ model: 'gpt-image-2', prompt: 'x' }))).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("a client that retries honours the 429's retry-after and then succeeds", async () => {
    const retrying = new OpenAI({ apiKey: fake.apiKey, baseURL: fake.baseUrl, maxRetries: 1 });
    fake.script(rateLimited('1'));
    const before = fake.requests.length;
    const res = await retrying.images.generate({ model: 'gpt-image-2', prompt: 'after a wait' });
    expect(res.data![0]!.b64_json).toBeTruthy();
    expect(fake.requests.length - before).toBe(2);
  });
});
