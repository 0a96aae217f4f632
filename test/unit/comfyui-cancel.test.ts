/**
 * Cancel at ComfyUI (G156): a prompt still waiting is deleted from the queue; a running
 * one is interrupted by its id; one that already ended is left alone. Other clients' prompts on the
 * same ComfyUI are never touched: the provider never sends an interrupt without a prompt id, and
 * sends one only when the queue shows its own prompt running (so even an older ComfyUI, which
 * ignores the id and stops whatever runs, is not asked while another client's prompt runs).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import type { MediaProvider, ProviderJob } from '../../src/providers/types.js';
import type { UpstreamRef } from '../../src/contract/task-request.js';
import { comfyContext, pic } from '../helpers/comfyui-jobs.js';
import { startFakeComfyUi, type FakeComfyUi } from '../fakes/comfyui.js';

let fake: FakeComfyUi;
let provider: MediaProvider;

async function open(options: Parameters<typeof startFakeComfyUi>[0] = {}): Promise<void> {
  fake = await startFakeComfyUi(options);
  provider = createComfyUiProvider({ id: 'comfy', baseUrl: fake.baseUrl });
}
afterEach(async () => {
  await provider?.close?.();
  await fake?.close();
});

async function started(job: ProviderJob): Promise<UpstreamRef> {
  const out = await provider.start!(job, comfyContext());
  if (out.state !== 'started') throw new Error('expected a started prompt');
  return out.ref;
}
const look = (job: ProviderJob, ref: UpstreamRef) => provider.check!(ref, job, comfyContext());
const interruptCalls = () => fake.calls.filter((c) => c.startsWith('POST /interrupt'));

describe('comfyui cancel', () => {
  beforeEach(() => open());

  it("a waiting prompt is deleted from the queue; the other client's running prompt goes on untouched", async () => {
    const theirs = await fake.foreign('their render [hold]');
    const job = pic({ prompt: 'mine' });
    const ref = await started(job);
    expect(fake.running()).toBe(theirs);
    expect(fake.pending()).toEqual([ref.id]);
    await provider.cancel!(ref, job, comfyContext());
    expect(fake.calls).toContain(`POST /queue {"delete":["${ref.id}"]}`);
    expect(fake.pending()).toEqual([]);
    expect(interruptCalls()).toEqual([]);
    expect(fake.running()).toBe(theirs);
    fake.release(theirs);
    await look(job, ref); // one step: theirs finishes
    expect(fake.history(theirs)).toMatchObject({ status: { status_str: 'success' } });
  });

  it('a running prompt is interrupted by its id, and only it: the waiting one of the other client runs next', async () => {
    const job = pic({ prompt: 'mine [hold]' });
    const ref = await started(job);
    await look(job, ref); // it starts
    const theirs = await fake.foreign('their render');
    expect(fake.running()).toBe(ref.id);
    await provider.cancel!(ref, job, comfyContext());
    expect(interruptCalls()).toEqual([`POST /interrupt {"prompt_id":"${ref.id}"}`]);
    expect(fake.interrupts).toEqual([{ asked: ref.id, interrupted: ref.id }]);
    const after = await look(job, ref);
    expect(after.state).toBe('pending'); // this look ends it: interrupted
    const ended = await look(job, ref);
    expect(ended.state).toBe('failed');
    expect(fake.history(ref.id)).toMatchObject({
      status: { status_str: 'error', messages: expect.arrayContaining([['execution_interrupted', expect.objectContaining({ prompt_id: ref.id })]]) },
    });
    await look(job, ref);
    await look(job, ref);
    expect(fake.history(theirs)).toMatchObject({ status: { status_str: 'success' } });
  });

  it('a prompt that already ended is left alone: no delete, no interrupt', async () => {
    const job = pic({});
    const ref = await started(job);
    for (let i = 0; i < 3; i++) await look(job, ref);
    expect(fake.history(ref.id)).toBeDefined();
    const before = fake.calls.length;
    await provider.cancel!(ref, job, comfyContext());
    expect(fake.calls.slice(before)).toEqual(['GET /queue']);
  });
});

describe('comfyui cancel on an older ComfyUI (an interrupt stops whatever runs)', () => {
  beforeEach(() => open({ targetedInterrupt: false }));

  it("while another client's prompt runs, the waiting prompt is deleted and nothing is interrupted", async () => {
    const theirs = await fake.foreign('their render [hold]');
    const job = pic({ prompt: 'mine' });
    const ref = await started(job);
    await provider.cancel!(ref, job, comfyContext());
    expect(interruptCalls()).toEqual([]);
    expect(fake.interrupts).toEqual([]);
    expect(fake.running()).toBe(theirs);
  });
});
