/**
 * The comfyui adapter fed replies of the wrong shape (G272, G453): a start whose `POST /prompt` is
 * answered 200 with any of them sends one prompt and is started or an unreadable create (which the
 * engine tries again: a start finds the earlier prompt first, G155); a check whose queue or history
 * answer is of the wrong shape is answered or a reply problem checked a bounded number of times,
 * never an error looked at until the attempt time limit, and never a failed generation (which would
 * queue another prompt) for a history entry, outputs or status that is not ComfyUI's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import { promptIdOf } from '../../src/providers/comfyui/prompt-identity.js';
import type { MediaProvider, ProviderJob } from '../../src/providers/types.js';
import { comfyContext, pic } from '../helpers/comfyui-jobs.js';
import { classifyCheck, classifyStart, malformedVariants, said, startScriptedUpstream, type ScriptedUpstream } from '../helpers/malformed-replies.js';

let upstream: ScriptedUpstream;
let provider: MediaProvider;
const next = { queue: '', history: '', prompt: '' };

beforeAll(async () => {
  upstream = await startScriptedUpstream((r) => ({
    body: r.method === 'POST' ? next.prompt : r.path.startsWith('/queue') ? next.queue : next.history,
  }));
  provider = createComfyUiProvider({ id: 'comfy', baseUrl: upstream.origin, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await upstream?.close();
});

const EMPTY_QUEUE = { queue_running: [], queue_pending: [] };
/** A queue item as ComfyUI lists it: `[number, prompt_id, prompt, extra_data, outputs_to_execute]`. */
const item = (n: number, promptId: string) => [n, promptId, {}, { client_id: 'mediagate:comfy' }, ['9']];
const ref = (job: ProviderJob) => ({ id: promptIdOf(job.taskId, job.generation), data: { kind: 'image', outputs: ['9'], template: 'image' } });
const validHistory = (promptId: string) => ({
  [promptId]: {
    prompt: [1, promptId, {}, {}, ['9']],
    outputs: { '9': { images: [{ filename: 'mediagate_00001_.png', subfolder: '', type: 'output' }] } },
    status: { status_str: 'success', completed: true, messages: [['execution_start', { prompt_id: promptId }]] },
  },
});

describe('comfyui: prompts answered 200 with the wrong shape', () => {
  it('each sends one prompt and is started or an unreadable create', async () => {
    const wrong: string[] = [];
    next.queue = JSON.stringify(EMPTY_QUEUE);
    next.history = '{}';
    for (const [name, body] of malformedVariants({ prompt_id: 'p1', number: 3, node_errors: {} })) {
      next.prompt = body;
      const before = upstream.count('POST', '/prompt');
      const r = await classifyStart(() => provider.start!(pic({}, 'image'), comfyContext()));
      expect(upstream.count('POST', '/prompt') - before, name).toBe(1);
      if (!['started', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a queue or history of the wrong shape looked at before the prompt is started or an unreadable reply', async () => {
    const wrong: string[] = [];
    next.prompt = JSON.stringify({ prompt_id: 'p1', number: 3, node_errors: {} });
    const job = pic({}, 'image');
    const mine = promptIdOf(job.taskId, job.generation);
    const cases = [
      ...malformedVariants({ queue_running: [item(1, 'other')], queue_pending: [item(2, 'another')] }).map(([n, b]) => [`queue ${n}`, b, '{}']),
      ...malformedVariants({ [mine]: { outputs: {}, status: { status_str: 'success' } } })
        .filter(([n]) => !n.startsWith(mine)) // the entry itself replaced: an earlier prompt found or not, both fine
        .map(([n, b]) => [`history ${n}`, JSON.stringify(EMPTY_QUEUE), b]),
    ];
    for (const [name, queue, history] of cases) {
      next.queue = queue!;
      next.history = history!;
      const r = await classifyStart(() => provider.start!(job, comfyContext()));
      if (!['started', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('comfyui: checks answered 200 with the wrong shape', () => {
  it('a queue of the wrong shape is answered or a reply problem', async () => {
    const wrong: string[] = [];
    const job = pic({}, 'image');
    const mine = promptIdOf(job.taskId, job.generation);
    next.history = JSON.stringify(validHistory(mine));
    const queues = [
      ...malformedVariants({ queue_running: [item(1, 'other')], queue_pending: [item(2, mine)] }),
      ...malformedVariants({ queue_running: [item(1, mine)], queue_pending: [] }),
    ];
    for (const [name, body] of queues) {
      next.queue = body;
      const r = await classifyCheck(() => provider.check!(ref(job), job, comfyContext()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a history of the wrong shape is answered or a reply problem; a failed generation only where ComfyUI could have said so', async () => {
    const wrong: string[] = [];
    const job = pic({}, 'image');
    const mine = promptIdOf(job.taskId, job.generation);
    next.queue = JSON.stringify(EMPTY_QUEUE);
    // the prompt not in the history (neither queued: lost), or a node's outputs without a file of
    // the task's kind (a workflow that made none), are answers ComfyUI gives: a failed generation
    const mayFail = (name: string) =>
      name === 'an empty object' || name === `${mine} missing` || name === `${mine}.outputs as an object` || name.startsWith(`${mine}.outputs.`);
    for (const [name, body] of malformedVariants(validHistory(mine))) {
      next.history = body;
      const r = await classifyCheck(() => provider.check!(ref(job), job, comfyContext()));
      if (r.class === 'checked again (unbounded)' || (r.class === 'failed' && !mayFail(name))) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});
