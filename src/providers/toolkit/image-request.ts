import type { RequestedJob } from '../types.js';

/** A request for an image: pic's, or a Model Center image model's. */
export type ImageJob = Extract<RequestedJob, { family: 'pic' | 'model-center' }>;

/**
 * What an image request asks, read by family (G405), as the image providers (openai-images,
 * gemini) map it. pic: the aspect is `size` (a ratio). Model Center: the aspect is `aspect_ratio`
 * when sent, else `size` (a ratio, or `WxH` pixels); `size`, `n` and `quality` are fields a Model
 * Center model takes as sent (D11), none of them typed by the contract.
 */
export interface ImageAsk {
  prompt: string;
  /** The field the aspect came in: named when it cannot be honoured. */
  aspectField: 'size' | 'aspect_ratio';
  /** The aspect as sent (trimmed), if sent. */
  aspect: string | undefined;
  /** `resolution` as sent (trimmed), if sent. */
  resolution: string | undefined;
  /** Model Center's `size` as sent (trimmed): pixels, or a ratio. */
  size: string | undefined;
  /** Model Center's `n`, as sent. */
  n: unknown;
  /** Model Center's `quality`, as sent (trimmed). */
  quality: string | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v.trim() : undefined);

/** What `job` asks of an image model. */
export function imageAskOf(job: ImageJob): ImageAsk {
  if (job.family === 'pic') {
    const p = job.params;
    return { prompt: p.prompt, aspectField: 'size', aspect: p.size, resolution: p.resolution, size: undefined, n: undefined, quality: undefined };
  }
  const p = job.params;
  const aspectField = str(p.aspect_ratio) !== undefined ? 'aspect_ratio' : 'size';
  return {
    prompt: p.prompt,
    aspectField,
    aspect: str(p[aspectField]),
    resolution: str(p.resolution),
    size: str(p.size),
    n: p.n,
    quality: str(p.quality),
  };
}
