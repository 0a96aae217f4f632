/**
 * The official `replicate` client against the fake predictions API: the fake speaks the protocol
 * the client was written for (create by model and by version, get, wait, cancel, problem+json
 * errors, throttling), so the provider's tests against the fake stand for the real API.
 */
import Replicate from 'replicate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLUX_SCHNELL, startFakeReplicate, throttled, VIDEO_VERSION, type FakeReplicate } from './fakes/replicate.js';

let fake: FakeReplicate;
let client: Replicate;
beforeAll(async () => {
  fake = await startFakeReplicate();
  client = new Replicate({ auth: fake.apiKey, baseUrl: fake.baseUrl, useFileOutput: false });
});
afterAll(async () => { await fake?.close(); });

describe('the official replicate client against the fake', () => {
  it('creates a prediction of an official model, and waits for it to succeed with file URLs', async () => {
    const created = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a fox', aspect_ratio: '16:9', output_format: 'png' } });
    expect(created).toMatchObject({ status: 'starting', model: FLUX_SCHNELL.name });
    const done = await client.wait(created, { interval: 10 });
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\/.+\.png$/)]);
    const again = await client.predictions.get(created.id);
    expect(again.id).toBe(created.id);
  });

  it('creates by version and cancels', async () => {
    const created = await client.predictions.create({ version: VIDEO_VERSION, input: { prompt: 'waves' } });
    const cancelled = await client.predictions.cancel(created.id);
    expect(cancelled.status).toBe('canceled');
    expect(fake.cancels).toContain(created.id);
  });

  it('surfaces invalid input as the client\'s ApiError with the 422 problem body', async () => {
    const err = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a fox', aspect_ratio: '7:3' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { response?: Response }).response?.status).toBe(422);
    expect((err as Error).message).toContain('aspect_ratio must be one of the following');
  });

  it('is throttled with retry-after and the client retries on its own', async () => {
    const created = await client.predictions.create({ model: FLUX_SCHNELL.name, input: { prompt: 'a hare' } });
    fake.script(throttled(0));
    const before = fake.requests.length;
    const got = await client.predictions.get(created.id);
    expect(got.id).toBe(created.id);
    expect(fake.requests.length - before).toBe(2);
  });
});
