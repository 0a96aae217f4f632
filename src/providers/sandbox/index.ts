import { FAMILIES } from '../../contract/families.js';
import type { SandboxTiming } from './timing.js';
import type { MediaProvider, ProviderContext, ProviderJob, ProviderOutput, StartResult } from '../types.js';
import { UnrecoverableError } from '../types.js';
import { renderSandboxImage } from './image.js';
import { fetchAll, promptOf, renderFailure, seedOf } from './job-inputs.js';
import { renderVideoJob } from './video-job.js';
import { simulatedDelayMs, simulateWork } from './timing.js';
import { tuningOf } from '../provider-tuning.js';

export interface SandboxOptions {
  timing: SandboxTiming;
  concurrency?: number;
  /** Default `sandbox`; providers.json may name more sandboxes. */
  id?: string;
}

/**
 * The built-in provider that makes real media locally, matching the request (D19),
 * deterministic (same request, same bytes). Prompt markers let clients test their failure paths:
 * `[fail]` fails the task at once; `[flaky]` fails the first attempt with a retryable error.
 */
export function createSandboxProvider(options: SandboxOptions): MediaProvider {
  return {
    id: options.id ?? 'sandbox',
    // it makes the media here, so a cancel stops it through the signal (its ffmpeg is killed)
    capabilities: { families: FAMILIES },
    // the sandbox makes media itself: nothing to call
    probe: async () => ({ call: 'none (the sandbox makes media itself)', status: null }),
    ...tuningOf(options),
    async start(job: ProviderJob, ctx: ProviderContext): Promise<StartResult> {
      ctx.signal.throwIfAborted();
      const prompt = promptOf(job);
      if (prompt.includes('[fail]')) throw new UnrecoverableError('sandbox: the prompt contains [fail], so this task fails on purpose');
      if (prompt.includes('[flaky]') && job.attempt === 1) throw new Error('sandbox: the prompt contains [flaky], so the first attempt fails (it is retried)');
      await simulateWork(simulatedDelayMs(options.timing, job.output, job.family), 8, 0, 60, ctx.signal, ctx.reportProgress);
      const output = job.output.kind === 'image' ? await renderImageJob(job, ctx, prompt) : await renderVideoJob(job, ctx, prompt);
      return { state: 'done', output };
    },
  };
}

async function renderImageJob(job: ProviderJob, ctx: ProviderContext, prompt: string): Promise<ProviderOutput> {
  if (job.output.kind !== 'image') throw new Error('not an image job');
  const references = await fetchAll(job.media.images, ctx, 60, 80);
  ctx.signal.throwIfAborted();
  const { width, height, format } = job.output;
  let data: Buffer;
  try {
    data = await renderSandboxImage({ width, height, prompt, seed: seedOf(job), references, format });
  } catch (err) {
    throw new UnrecoverableError(`sandbox: ${renderFailure(err, job.media)}`, { cause: err });
  }
  ctx.reportProgress(95);
  ctx.signal.throwIfAborted();
  const ext = format === 'png' ? 'png' : 'jpg';
  return { files: [{ name: `image.${ext}`, contentType: format === 'png' ? 'image/png' : 'image/jpeg', data, width, height }] };
}
