import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  Mediagate,
  type MediagateError,
  NotFoundError,
  StreamError,
  TaskCancelledError,
  TaskFailedError,
  TimeoutError,
  type AnyTask,
  type FetchLike,
} from '../../../packages/client/src/index.js';
import { heldSandbox } from '../../helpers/held-sandbox.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';

// The SDK (packages/client) against a real gateway listening on a port (G230-G234):
// every call below goes over HTTP through the global fetch, nothing is mocked. The fetch is wrapped
// only to record which URLs were asked. The sandbox of `g` holds each task until the test has had
// waitFor's first reply (G276), so the queries after it are long-polls (`?wait=N`), as they are for
// a task that takes a while, without waiting for a sandbox timing.
const sandbox = heldSandbox();
let g: ListeningGateway;
let idle: ListeningGateway; // no worker: its tasks stay queued, so they can be cancelled
const asked: string[] = [];
const recording: FetchLike = (url, init) => {
  asked.push(url);
  return fetch(url, init);
};
let client: Mediagate;

beforeAll(async () => {
  [g, idle] = await Promise.all([listeningGateway({ providers: [sandbox.provider] }), listeningGateway({ workers: false })]);
  client = new Mediagate({ baseUrl: g.origin, apiKey: g.key, fetch: recording });
});
afterAll(async () => {
  sandbox.releaseAll();
  await Promise.all([g?.close(), idle?.close()]);
});

/** waitFor's `onProgress` that lets task `id` run once waitFor has its first reply (then calls `also`). */
const runAfterFirstReply =
  (id: string, also?: (t: AnyTask) => void) =>
  (t: AnyTask): void => {
    sandbox.release(id);
    also?.(t);
  };

describe('families: create, get, waitFor', () => {
  it('pic: waitFor long-polls to completed, reports each change, and the image URL serves a PNG', async () => {
    const created = await client.pic.create({ model: 'pic', prompt: 'a lighthouse', size: '16:9' });
    expect(created).toMatchObject({ object: 'image', model: 'pic' });
    expect(['queued', 'processing']).toContain(created.status);
    const seen: AnyTask[] = [];
    asked.length = 0;
    const done = await client.pic.waitFor(created.id, { onProgress: runAfterFirstReply(created.id, (t) => seen.push(t)) });
    expect(seen[0]?.status).not.toBe('completed');
    expect(done.status).toBe('completed');
    expect(done.image_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    expect(seen.at(-1)?.status).toBe('completed');
    expect(asked.some((u) => u.endsWith(`/v1/result/${created.id}?wait=2`))).toBe(true); // the family's 2 s
    const png = await fetch(done.image_url!);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect((await client.pic.get(created.id)).status).toBe('completed');
  });

  it('videos: create answers the envelope; waitFor on its projectId gives the video and its length', async () => {
    const created = await client.videos.create({ model: 'videos_fast', prompt: 'waves', duration: 4 });
    expect(created.code).toBe('0');
    const done = await client.videos.waitFor(created.data.projectId, { pollIntervalMs: 1000, onProgress: runAfterFirstReply(created.data.projectId) });
    expect(done).toMatchObject({ status: 'completed', object: 'video', actualDuration: 4 });
    expect(done.video_url).toContain('/files/');
  });

  it('clip, reel and Model Center: create and waitFor', async () => {
    const clip = await client.clip.create({ model: 'clip_3_1_fast', prompt: 'a fox', aspect_ratio: '9:16' });
    const reel = await client.reel.create({ model: 'reelOa2Plus', prompt: 'a city', duration: 4 });
    const mc = await client.modelCenter.create({ model: 'sd_2.0_fast_discount', prompt: 'a kite', duration: 4, resolution: '480p', generate_audio: false });
    expect(mc).toMatchObject({ status: 'queued', result_url: null, model: 'sd_2.0_fast_discount' });
    const [c, r, m] = await Promise.all([
      client.clip.waitFor(clip.id, { pollIntervalMs: 1000, onProgress: runAfterFirstReply(clip.id) }),
      client.reel.waitFor(reel.id, { pollIntervalMs: 1000, onProgress: runAfterFirstReply(reel.id) }),
      client.modelCenter.waitFor(mc.id, { onProgress: runAfterFirstReply(mc.id) }),
    ]);
    expect([c.status, r.status, m.status]).toEqual(['completed', 'completed', 'completed']);
    expect(m.result_url).toBe(m.video_url);
    expect(asked.some((u) => u.includes(`/v2/model-center/tasks/${mc.id}?wait=5`))).toBe(true);
    expect(asked.some((u) => u.includes(`/v1/videos/${reel.id}`))).toBe(true);
  });

  it('a failed task: waitFor throws TaskFailedError carrying the task body', async () => {
    const created = await client.pic.create({ model: 'pic', prompt: 'broken [fail]' });
    const err = await client.pic.waitFor(created.id, { onProgress: runAfterFirstReply(created.id) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailedError);
    expect((err as TaskFailedError).task).toMatchObject({ id: created.id, status: 'failed' });
    expect((err as TaskFailedError).task.error).toContain('[fail]');
  });

  it('motion: cancel a queued task, then waitFor throws TaskCancelledError carrying it', async () => {
    const c = new Mediagate({ baseUrl: idle.origin, apiKey: idle.key });
    const created = await c.motion.create({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a boat' }], duration: 4 });
    expect(created.status).toBe('queued');
    expect((await c.motion.cancel(created.id)).status).toBe('cancelled');
    const err = await c.motion.waitFor(created.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskCancelledError);
    expect((err as TaskCancelledError).task).toMatchObject({ id: created.id, status: 'cancelled' });
  });

  it('motion: waitFor a running task to completed; cancelling it then is a ConflictError (409 invalid_task_state)', async () => {
    // the smallest video the family accepts (G417): the SDK's calls are what this is about
    const created = await client.motion.create({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a kite' }], duration: 1, ratio: '1:1' });
    const done = await client.motion.waitFor(created.id, { pollIntervalMs: 1000, onProgress: runAfterFirstReply(created.id) });
    expect(done).toMatchObject({ status: 'completed', object: 'video' });
    expect(asked.some((u) => u.includes(`/v1/result/${created.id}?wait=1`))).toBe(true);
    const err = await client.motion.cancel(created.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).code).toBe('invalid_task_state');
  });

  it('waitFor gives up after timeoutMs with a TimeoutError', async () => {
    const c = new Mediagate({ baseUrl: idle.origin, apiKey: idle.key });
    const created = await c.pic.create({ model: 'pic', prompt: 'never runs either' });
    await expect(c.pic.waitFor(created.id, { timeoutMs: 1500 })).rejects.toBeInstanceOf(TimeoutError);
  });

  it('tasks.waitFor follows any task to its end, its interval read off its first reply, which is its first query', async () => {
    const created = await client.pic.create({ model: 'pic', prompt: 'followed by id alone' });
    const from = asked.length;
    const done = await client.tasks.waitFor(created.id, { onProgress: runAfterFirstReply(created.id) });
    expect(done).toMatchObject({ id: created.id, status: 'completed' });
    const queries = asked.slice(from);
    expect(queries.length).toBeGreaterThan(1);
    expect(queries[0]).toBe(`${g.origin}/v1/result/${created.id}`); // no query before the wait's own
    // a picture's interval: long-polls of 2 s (a video's would be 30)
    expect(queries.slice(1).every((u) => u === `${g.origin}/v1/result/${created.id}?wait=2`)).toBe(true);
  });

  it('tasks.waitFor: timeoutMs bounds its first query too (a gateway that never answers)', async () => {
    const silent = http.createServer(() => undefined); // takes each request, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const c = new Mediagate({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: idle.key });
      await expect(c.tasks.waitFor('task_never_answered', { timeoutMs: 500 })).rejects.toBeInstanceOf(TimeoutError);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("waitFor stops when its signal is aborted, with the signal's reason", async () => {
    const c = new Mediagate({ baseUrl: idle.origin, apiKey: idle.key });
    const created = await c.pic.create({ model: 'pic', prompt: 'never runs' });
    const controller = new AbortController();
    const waiting = c.pic.waitFor(created.id, { signal: controller.signal, onProgress: () => controller.abort(new Error('enough')) });
    await expect(waiting).rejects.toThrow('enough');
  });
});

describe('chat', () => {
  const params = { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'Say something' }] } as const;

  it('whole: the envelope', async () => {
    const reply = await client.chat.create({ ...params, messages: [...params.messages] });
    expect(reply).toMatchObject({ code: '200', success: true });
    expect(reply.data.content.length).toBeGreaterThan(0);
    expect(reply.data.usage.total_tokens).toBe(reply.data.usage.prompt_tokens + reply.data.usage.completion_tokens);
  });

  it('streamed: chunks whose deltas make the text, a finish reason and usage', async () => {
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of client.chat.stream({ ...params, messages: [...params.messages] })) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });

  it('an error event inside the stream throws StreamError after the text sent before it', async () => {
    let text = '';
    const err = await (async () => {
      for await (const chunk of client.chat.stream({ ...params, messages: [{ role: 'user', content: 'go [fail-midway]' }] }))
        text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    expect((err as StreamError).body).toMatchObject({ error: { code: 'upstream_error', type: 'upstream_error' } });
    // the stream's status is 200: the message says the stream broke and why, not "200 upstream_error"
    expect((err as StreamError).message).toMatch(/^the chat stream ended with an error: upstream_error: .*\[fail-midway\]/);
    expect(text.length).toBeGreaterThan(0);
  });

  it('a bad chat request is a BadRequestError with the chat envelope as its body', async () => {
    const err = await client.chat.create({ ...params, messages: [...params.messages], temperature: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as MediagateError).body).toMatchObject({ code: '400', success: false, data: null });
    // the envelope's code is only the status: the catalog code in the message comes from x-error-code (G238's format)
    expect((err as MediagateError).message).toMatch(/^400 invalid_request: .*temperature/);
  });
});

describe('typed errors', () => {
  it('400: BadRequestError with the standard body, code, param, status and request id', async () => {
    const err = await client.pic.create({ model: 'pic', prompt: 'x', size: '7:1' as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    const e = err as BadRequestError;
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', 'size']);
    expect(e.requestId).toMatch(/.+/);
    expect(e.body).toMatchObject({ error: { param: 'size' } });
  });

  it('videos create errors keep their envelope; the catalog code comes from the x-error-code header (G312)', async () => {
    const err = await client.videos.create({ model: 'videos', prompt: 'x', duration: 99 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as MediagateError).body).toMatchObject({ code: '400', data: null });
    expect((err as MediagateError).code).toBe('invalid_request');
    expect((err as MediagateError).message).toMatch(/^400 invalid_request: duration/);
  });

  it("404 for an unknown task and another key's task; 401 for a bad key", async () => {
    const mine = await client.pic.create({ model: 'pic', prompt: 'mine' });
    const other = new Mediagate({ baseUrl: g.origin, apiKey: g.otherKey });
    await expect(other.pic.get(mine.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.tasks.get('task_nope')).rejects.toMatchObject({ status: 404, code: 'task_not_found' });
    const bad = new Mediagate({ baseUrl: g.origin, apiKey: 'mg_wrong' });
    await expect(bad.pic.get(mine.id)).rejects.toBeInstanceOf(AuthenticationError);
  });
});
