import { createHash } from 'node:crypto';
import type { MediaRef, MediaRefs } from '../../contract/media-refs.js';
import type { ProviderContext, ProviderJob } from '../types.js';
import { UnrecoverableError } from '../types.js';
import { ReferenceDecodeError } from './image.js';
import { VideoFrameDecodeError } from './video.js';

/** Media the sandbox accepts per URL (the contract's largest image limit). */
const MAX_REFERENCE_BYTES = 30 * 1024 * 1024;

/** The prompt text of any family's parameters: motion's text object (none: empty), every other family's `prompt`. */
export function promptOf(job: ProviderJob): string {
  if (job.family !== 'motion') return job.params.prompt;
  for (const item of job.params.content) if (item.type === 'text') return item.text;
  return '';
}

/** A stable seed: the same model and parameters give the same media. */
export function seedOf(job: ProviderJob): string {
  return createHash('sha256')
    .update(JSON.stringify([job.model, job.params, job.output]))
    .digest('hex');
}

/** Fetches caller media in order; a medium that cannot be had fails the task with its field named. */
export async function fetchAll(refs: readonly MediaRef[], ctx: ProviderContext, fromProgress: number, toProgress: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const [i, ref] of refs.entries()) {
    try {
      out.push(await ctx.readMedia(ref, MAX_REFERENCE_BYTES));
    } catch (err) {
      throw new UnrecoverableError(err instanceof Error ? err.message : `${ref.field}: could not be fetched`, { cause: err });
    }
    ctx.reportProgress(fromProgress + ((toProgress - fromProgress) * (i + 1)) / refs.length);
  }
  return out;
}

/**
 * The message of a rendering failure, naming a caller medium by the caller's field
 * (`image_urls[0]`, `content[1].image_url.url`) rather than by its place among the renderer's inputs.
 */
export function renderFailure(err: unknown, media: MediaRefs): string {
  const ref = err instanceof ReferenceDecodeError ? media.images[err.index] : err instanceof VideoFrameDecodeError ? media[err.which] : undefined;
  if (ref && (err instanceof ReferenceDecodeError || err instanceof VideoFrameDecodeError))
    return `${ref.field} could not be decoded as an image: ${err.detail}`;
  return err instanceof Error ? err.message : String(err);
}
