import { createHash } from 'node:crypto';
import type { SandboxTiming } from '../../config.js';
import type { MediaRef } from '../../contract/media-refs.js';
import type { Provider, ProviderContext, ProviderJob, ProviderOutput } from '../types.js';
import { UnrecoverableError } from '../types.js';
import { renderSandboxImage } from './image.js';
import { simulatedDelayMs, simulateWork } from './timing.js';

/** Reference images the sandbox accepts per URL (the contract's largest image limit). */
const MAX_REFERENCE_BYTES = 30 * 1024 * 1024;

export interface SandboxOptions {
  timing: SandboxTiming;
  concurrency?: number;
}

/**
 * The built-in provider that makes real media locally, matching the request (decisions.md #19),
 * deterministic (same request, same bytes). Prompt markers let clients test their failure paths:
 * `[fail]` fails the task at once; `[flaky]` fails the first attempt with a retryable error.
 */
export function createSandboxProvider(options: SandboxOptions): Provider {
  return {
    id: 'sandbox',
    capabilities: { families: ['pic', 'clip', 'reel', 'motion', 'videos', 'model-center'], cancel: true },
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    async submit(job: ProviderJob, ctx: ProviderContext): Promise<ProviderOutput> {
      const prompt = promptOf(job);
      if (prompt.includes('[fail]')) throw new UnrecoverableError('sandbox: the prompt contains [fail], so this task fails on purpose');
      if (prompt.includes('[flaky]') && job.attempt === 1) throw new Error('sandbox: the prompt contains [flaky], so the first attempt fails (it is retried)');
      await simulateWork(simulatedDelayMs(options.timing, job.output, job.family), 8, 0, 60, ctx.signal, ctx.reportProgress);
      if (job.output.kind === 'image') return renderImageJob(job, ctx, prompt);
      throw new UnrecoverableError(`sandbox: ${job.output.kind} output is not supported yet`);
    },
  };
}

/** The prompt text of any family's parameters. */
export function promptOf(job: ProviderJob): string {
  const p = job.params;
  if (typeof p.prompt === 'string') return p.prompt;
  if (Array.isArray(p.content)) {
    const text = p.content.find((c: unknown) => (c as { type?: string }).type === 'text') as { text?: string } | undefined;
    return text?.text ?? '';
  }
  return '';
}

/** A stable seed: the same model and parameters give the same media. */
export function seedOf(job: ProviderJob): string {
  return createHash('sha256').update(JSON.stringify([job.model, job.params, job.output])).digest('hex');
}

/** Fetches caller media in order; a medium that cannot be had fails the task with its field named. */
async function fetchAll(refs: readonly MediaRef[], ctx: ProviderContext, fromProgress: number, toProgress: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const [i, ref] of refs.entries()) {
    try {
      out.push(await ctx.fetchMedia(ref.url, ref.field, MAX_REFERENCE_BYTES));
    } catch (err) {
      throw new UnrecoverableError(err instanceof Error ? err.message : `${ref.field}: could not be fetched`, { cause: err });
    }
    ctx.reportProgress(fromProgress + ((toProgress - fromProgress) * (i + 1)) / refs.length);
  }
  return out;
}

async function renderImageJob(job: ProviderJob, ctx: ProviderContext, prompt: string): Promise<ProviderOutput> {
  if (job.output.kind !== 'image') throw new Error('not an image job');
  const references = await fetchAll(job.media.images, ctx, 60, 80);
  const { width, height, format } = job.output;
  let data: Buffer;
  try {
    data = await renderSandboxImage({ width, height, prompt, seed: seedOf(job), references, format });
  } catch (err) {
    throw new UnrecoverableError(`sandbox: ${err instanceof Error ? err.message : 'image could not be rendered'}`, { cause: err });
  }
  ctx.reportProgress(95);
  const ext = format === 'png' ? 'png' : 'jpg';
  return { files: [{ name: `image.${ext}`, contentType: format === 'png' ? 'image/png' : 'image/jpeg', data, width, height }] };
}
