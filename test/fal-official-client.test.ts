/**
 * The official `@fal-ai/client` against the fake queue: the fake speaks the protocol the client
 * was written for. The client has no base-URL option; its requestMiddleware sends its
 * `https://queue.fal.run` calls to the fake. It builds status, result and cancel URLs from the
 * endpoint id without the sub-path, which the fake serves (and the trap's wrong URL would be 404).
 */
import { ApiError, createFalClient, ValidationError } from '@fal-ai/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeFal, type FakeFal } from './fakes/fal.js';

let fake: FakeFal;
let fal: ReturnType<typeof createFalClient>;
beforeAll(async () => {
  fake = await startFakeFal();
  fal = createFalClient({
    credentials: fake.apiKey,
    requestMiddleware: async (request) => ({ ...request, url: request.url.replace('https://queue.fal.run', fake.baseUrl) }),
  });
});
afterAll(async () => { await fake?.close(); });

describe('the official fal client against the fake queue', () => {
  it('submits, follows the status while queued, and reads the result', async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox [queue:2]', image_size: 'square_hd' } });
    expect(fake.submits.at(-1)?.headers.authorization).toBe(`Key ${fake.apiKey}`);
    const first = await fal.queue.status('fal-ai/flux/dev', { requestId, logs: true });
    expect(first.status).toBe('IN_QUEUE');
    const done = await fal.queue.subscribeToStatus('fal-ai/flux/dev', { requestId, mode: 'polling', pollInterval: 5 });
    expect(done.status).toBe('COMPLETED');
    const result = await fal.queue.result('fal-ai/flux/dev', { requestId });
    expect(result.requestId).toBe(requestId);
    expect((result.data as { images: Array<{ url: string; width: number }> }).images[0]).toMatchObject({ width: 1024 });
  });

  it('a sub-path model is followed at the URLs without its sub-path, and cancelled there', async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/veo3/image-to-video', {
      input: { prompt: 'waves [hold]', image_url: 'https://example.com/a.png' },
    });
    await fal.queue.cancel('fal-ai/veo3/image-to-video', { requestId });
    expect(fake.calls).toContain(`cancel ${requestId}`);
    expect(fake.notFound).toEqual([]);
  });

  it("a model's refusal shows only on the result, as the client's ValidationError with the fields", async () => {
    const { request_id: requestId } = await fal.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox', num_images: 9 } });
    await fal.queue.subscribeToStatus('fal-ai/flux/dev', { requestId, mode: 'polling', pollInterval: 5 });
    const err = await fal.queue.result('fal-ai/flux/dev', { requestId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(422);
    expect((err as ValidationError).fieldErrors.map((f) => f.loc.join('.'))).toContain('body.num_images');
  });

  it('a wrong key is the client\'s ApiError 401', async () => {
    const wrong = createFalClient({ credentials: 'bad:key', requestMiddleware: async (r) => ({ ...r, url: r.url.replace('https://queue.fal.run', fake.baseUrl) }) });
    const err = await wrong.queue.submit('fal-ai/flux/dev', { input: { prompt: 'a fox' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError<unknown>).status).toBe(401);
  });
});
