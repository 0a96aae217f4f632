/**
 * The declared mapping of the `openai-images` provider (G130): each field of a `pic`
 * or Model Center image request is translated into an Images API field, or the request is
 * refused naming it. Nothing is dropped silently.
 *
 * | request field | Images API |
 * |---|---|
 * | `prompt` | `prompt` |
 * | `size` (ratio), `aspect_ratio`, `resolution` | `size` (sizes.ts) |
 * | Model Center `size: "WxH"` | `size`, exactly, or refused |
 * | `image_urls`, `reference_images` | `/images/edits` with `image[]` (none for dall-e-3, one for dall-e-2, 16 for GPT image models) |
 * | Model Center `quality` | `quality`, when the model takes that value |
 * | Model Center `n` | 1 only (a task makes one image) |
 * | anything else (videos, audios, frames, duration, ...) | refused |
 */
import { paramFields } from '../../contract/family-request.js';
import type { MediaRef } from '../../contract/media-refs.js';
import { imageAskOf, type ImageJob } from '../toolkit/image-request.js';
import type { Refusal, RequestedJob } from '../types.js';
import { rulesOf, type ImageModelRules } from './models.js';
import { upstreamSize, type UpstreamSize } from './sizes.js';

/** What one generation sends. */
export interface ImagesCall {
  model: string;
  prompt: string;
  size: UpstreamSize;
  quality?: string;
  /** Reference images, in field order: present means `/images/edits`. */
  images: MediaRef[];
  rules: ImageModelRules;
}

/** Model Center fields every image model shares (model-center.ts): translated below. */
const MODEL_CENTER_FIELDS = new Set(['prompt', 'image_urls', 'reference_images', 'size', 'aspect_ratio', 'resolution', 'quality', 'n']);
const PIC_FIELDS = new Set(['prompt', 'image_urls', 'size', 'resolution']);

const PIXELS = /^\s*\d{2,4}[x*]\d{2,4}\s*$/i;
const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

function unknownField(job: ImageJob): Refusal | undefined {
  const known = job.family === 'pic' ? PIC_FIELDS : MODEL_CENTER_FIELDS;
  const params = paramFields(job.params);
  const field = Object.keys(params).find((k) => !known.has(k) && !isEmpty(params[k]));
  if (field === undefined) return undefined;
  return { field, message: `the OpenAI Images API has no such input (model ${job.upstreamModel})` };
}

/** The Images API call for a request, or why it cannot be made. */
export function imagesCallOf(job: RequestedJob): ImagesCall | Refusal {
  const model = job.upstreamModel;
  if (job.family !== 'pic' && job.family !== 'model-center')
    return { field: 'model', message: `model ${job.model}: the openai-images provider makes images for pic and Model Center image models only` };
  if (job.output.kind !== 'image') return { field: 'model', message: `model ${job.model} makes videos; the openai-images provider makes images only` };
  const unknown = unknownField(job);
  if (unknown) return unknown;
  const rules = rulesOf(model);
  const asked = imageAskOf(job);
  const n = asked.n;
  if (n !== undefined && Number(n) !== 1) return { field: 'n', message: `n ${String(n)}: a task makes one image (n 1)` };
  const quality = asked.quality;
  if (quality !== undefined && !rules.quality.includes(quality))
    return { field: 'quality', message: `quality ${quality}: ${model} takes ${rules.quality.join(', ')}` };
  const images = job.media.images;
  if (images.length > rules.maxImages) {
    const first = images[rules.maxImages]!;
    const message =
      rules.maxImages === 0
        ? `${model} takes no reference images`
        : `${model} takes at most ${rules.maxImages} reference image${rules.maxImages === 1 ? '' : 's'}`;
    return { field: first.field, message };
  }
  const other = [job.media.firstFrame, job.media.lastFrame, ...job.media.videos, ...job.media.audios].find((r) => r !== undefined);
  if (other) return { field: other.field, message: `${model} takes reference images only` };
  const exact = PIXELS.test(asked.size ?? '');
  const size = upstreamSize(model, rules, {
    width: job.output.width,
    height: job.output.height,
    exact,
    fields: { aspect: asked.aspectField, resolution: 'resolution', size: 'size' },
    said: { aspect: asked.aspect ?? '1:1', resolution: asked.resolution ?? '1k' },
  });
  if ('field' in size) return size;
  return { model, prompt: asked.prompt, size, images, rules, ...(quality !== undefined && { quality }) };
}
