import { createHash } from 'node:crypto';
import type { SandboxTiming } from '../../config.js';
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

async function renderImageJob(job: ProviderJob, ctx: ProviderContext, prompt: string): Promise<ProviderOutput> {
  if (job.output.kind !== 'image') throw new Error('not an image job');
  const urls = Array.isArray(job.params.image_urls) ? (job.params.image_urls as string[]) : [];
  const references: Buffer[] = [];
  for (const [i, url] of urls.entries()) {
    try {
      references.push(await ctx.fetchMedia(url, `image_urls[${i}]`, MAX_REFERENCE_BYTES));
    } catch (err) {
      throw new UnrecoverableError(err instanceof Error ? err.message : `image_urls[${i}]: could not be fetched`, { cause: err });
    }
    ctx.reportProgress(60 + (20 * (i + 1)) / urls.length);
  }
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
