/**
 * The relay fed replies of the wrong shape by its upstream (another mediagate; G96, G272, G453): a
 * create answered 2xx with any of them sends one create and is started or an unreadable create
 * (which the engine tries again under the same Idempotency-Key); a refusal only where the videos
 * envelope's code says so; a check of the wrong shape is answered or a reply problem checked a bounded number of
 * times, never an error looked at until the attempt time limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planVideosTask } from '../../src/contract/videos.js';
import { createRelayProvider } from '../../src/providers/relay/index.js';
import { AppError } from '../../src/errors.js';
import type { Provider, ProviderJob } from '../../src/providers/types.js';
import { classifyCheck, classifyStart, malformedVariants, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';
import { asBody, jobOfPlan } from '../helpers/provider-jobs.js';
import { chatContext, chatRequest, context, KEY, picJob } from '../helpers/relay-unit.js';

let upstream: ScriptedUpstream;
let relay: Provider;
const next = { create: '', query: '' };

beforeAll(async () => {
  upstream = await startScriptedUpstream((r) => ({ body: r.method === 'POST' ? next.create : next.query }));
  relay = createRelayProvider({ id: 'up', baseUrl: upstream.origin, apiKey: KEY, timeoutMs: 10_000 });
});
afterAll(async () => {
  await relay?.close?.();
  await upstream?.close();
});

const videosJob = (): ProviderJob => jobOfPlan(planVideosTask(asBody({ model: 'videos', prompt: 'a fox runs', duration: 5 })), 'videos');
const picTask = { id: 'task_up1', object: 'pic.task', model: 'pic', status: 'queued', progress: 0, image_url: null, error: null, created_at: 1 };

describe('relay: creates answered 200 with the wrong shape', () => {
  it.each([
    ['pic', picJob, picTask],
    ['videos', videosJob, { code: '0', msg: 'ok', data: { projectId: 'proj_1' } }],
  ] as const)('%s: each sends one create and is started or an unreadable create', async (_family, job, valid) => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants(valid)) {
      next.create = body;
      const before = upstream.count('POST', '/');
      const r = await classifyStart(() => relay.start!(job(), context()));
      expect(upstream.count('POST', '/') - before, name).toBe(1);
      // a videos code that is text or a number other than 0 is the upstream's refusal (G96)
      const refusal = /^code as (a string|a huge number|a negative number)$/.test(name);
      if (!['started', 'unreadable create', ...(refusal ? ['refused'] : [])].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('relay: checks answered 200 with the wrong shape', () => {
  it('a task object of the wrong shape is answered or a reply problem', async () => {
    const wrong: string[] = [];
    const job = picJob();
    const ref = { id: 'task_up1' };
    const answers = [
      ...malformedVariants({ ...picTask, status: 'processing', progress: 40 }),
      ...malformedVariants({ ...picTask, status: 'completed', progress: 100, image_url: 'https://cdn.example.com/a.png', actualDuration: 0 }),
      ...malformedVariants({ ...picTask, status: 'failed', error: 'the prompt was refused' }),
    ];
    for (const [name, body] of answers) {
      next.query = body;
      const r = await classifyCheck(() => relay.check!(ref, job, context()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('relay: chat envelopes answered 200 with the wrong shape', () => {
  it("each is a reply in whole tokens or a 502 (the channel's fault: G98), never a TypeError", async () => {
    const wrong: string[] = [];
    const valid = {
      code: '200',
      msg: 'ok',
      data: { content: 'Hi', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }, model: 'x', id: 'chatcmpl-1', finish_reason: 'stop' },
      success: true,
    };
    for (const [name, body] of malformedVariants(valid)) {
      next.create = body;
      try {
        const { content, usage } = await relay.chat!.complete(chatRequest, chatContext());
        const counts = [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens];
        if (typeof content !== 'string' || !counts.every((n) => Number.isSafeInteger(n) && n >= 0))
          wrong.push(`${name}: ${JSON.stringify({ content, usage })}`);
      } catch (err) {
        // a code other than "200" is the upstream's error in the envelope (G98): its status
        if (!(err instanceof AppError) || err.name === 'TypeError') wrong.push(`${name}: ${(err as Error).name} ${(err as Error).message}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
