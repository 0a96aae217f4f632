/**
 * The shared provider contract (provider-contract.case.ts) run against the relay, pointing at an
 * upstream mediagate (sandbox, instant timing) through a proxy: jobs of every kind of output it
 * relays complete with truthful files; "an abort while it runs" is an abort while the relay's call
 * to the upstream is in flight (the fault proxy holds creates whose prompt says `[hold]`); the
 * unrecoverable job is a request the upstream refuses with a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planClipTask } from '../../../src/contract/clip.js';
import { planModelCenterTask } from '../../../src/contract/model-center.js';
import { planMotionTask } from '../../../src/contract/motion.js';
import { planPicTask } from '../../../src/contract/pic.js';
import type { SubmitPlan } from '../../../src/contract/submit-plan.js';
import { planVideosTask } from '../../../src/contract/videos.js';
import { createLogger } from '../../../src/logger.js';
import { UnrecoverableError, type CheckResult, type MediaProvider, type ProviderContext, type ProviderJob } from '../../../src/providers/types.js';
import { waitFor } from '../../helpers/wait-for.js';
import { asBody, jobOfPlan } from '../../helpers/provider-jobs.js';
import { startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';
import { runProviderContract, runToOutput } from '../../cases/provider-contract.case.js';

let pair: RelayPair;
beforeAll(async () => {
  pair = await startRelayPair();
  // never answered: the relay's call stays in flight until it is aborted (the proxy's close ends the rest)
  pair.proxy.addRule({ match: { method: 'POST', body: /\[hold\]/ }, fault: 'hang' });
}, 60_000);
afterAll(async () => {
  await pair?.close();
});

/** Creates the proxy holds, and those whose connection the relay dropped (it aborted the call). */
const held = () => pair.proxy.requests.filter((r) => r.action === 'hang');
const dropped = () => held().filter((r) => r.closedBy === 'client').length;

/** A job as the runner makes it from a stored task: a new task id each time (so a new Idempotency-Key). */
function relayJob(plan: () => SubmitPlan): () => ProviderJob {
  return () => {
    const p = plan();
    return jobOfPlan(p, p.model);
  };
}

/** A pic plan whose stored prompt is empty: one no gateway's validation passes. */
function emptyPromptPlan(): SubmitPlan {
  const plan = planPicTask(asBody({ model: 'pic', prompt: 'x' }));
  return { ...plan, params: { ...plan.params, prompt: '' } };
}

const relay = (): MediaProvider => pair.relay as MediaProvider;

runProviderContract('relay (to an upstream mediagate)', {
  make: relay,
  jobs: [
    { name: 'pic image', job: relayJob(() => planPicTask(asBody({ model: 'pic', prompt: 'contract', size: '4:3' }))) },
    { name: 'clip Form B video with its actualDuration', job: relayJob(() => planClipTask(asBody({ model: 'clip_3_1_fast', prompt: 'contract' }))) },
    {
      name: 'motion video with audio',
      job: relayJob(() => planMotionTask(asBody({ model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'contract' }], duration: 4 }))),
    },
    { name: 'videos video', job: relayJob(() => planVideosTask(asBody({ model: 'videos', prompt: 'contract', duration: 4 }))) },
    { name: 'Model Center image', job: relayJob(() => planModelCenterTask(asBody({ model: 'imagegen-5.0', prompt: 'contract', size: '320x200' }))) },
  ],
  longJob: relayJob(() => planPicTask(asBody({ model: 'pic', prompt: 'contract [hold]' }))),
  // an empty prompt passes no gateway's validation: the upstream answers 400 naming prompt
  unrecoverableJob: relayJob(emptyPromptPlan),
});

describe('relay: what the contract suite does not look at', () => {
  const context = (): ProviderContext => ({
    signal: new AbortController().signal,
    log: createLogger('silent'),
    workDir: '',
    reportProgress: () => undefined,
    readMedia: async () => {
      throw new Error('not used');
    },
    mediaUrl: (ref) => ref.url,
  });

  it('an abort while the create is in flight at the upstream rejects with its reason and drops the connection', async () => {
    const controller = new AbortController();
    const before = { held: held().length, dropped: dropped() };
    const started = relay().start(relayJob(() => planPicTask(asBody({ model: 'pic', prompt: 'in flight [hold]' })))(), {
      ...context(),
      signal: controller.signal,
    });
    await waitFor(() => (held().length > before.held ? true : undefined), 5000, 'the create to reach the proxy');
    controller.abort('cancelled');
    await expect(started).rejects.toBe('cancelled');
    await waitFor(() => (dropped() > before.dropped ? true : undefined), 5000, 'the connection dropped');
  });

  it('the refused request names the field the upstream named', async () => {
    const job = relayJob(emptyPromptPlan)();
    const err = await runToOutput(relay(), job, context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as UnrecoverableError).param).toBe('prompt');
    expect((err as Error).message).toMatch(/^prompt/);
  });

  it('a check after the task completed upstream answers the same file again (checks are idempotent)', async () => {
    const job = relayJob(() => planPicTask(asBody({ model: 'pic', prompt: 'twice' })))();
    const started = await relay().start(job, context());
    expect(started.state).toBe('started');
    const ref = (started as Extract<typeof started, { state: 'started' }>).ref;
    let first: CheckResult | undefined;
    for (let i = 0; i < 200 && first?.state !== 'completed'; i++) {
      first = await relay().check!(ref, job, context());
      if (first.state !== 'completed') await new Promise((r) => setTimeout(r, 20));
    }
    expect(first?.state).toBe('completed');
    expect(await relay().check!(ref, job, context())).toEqual(first);
  });
});
