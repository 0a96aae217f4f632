/**
 * The declared mapping of a `gemini` image model (G145): each field of a `pic` or
 * Model Center image request becomes part of a `generateContent` call, or the request is refused
 * naming it (G128). Nothing is dropped silently.
 *
 * | request field | generateContent |
 * |---|---|
 * | `prompt` | the first text part |
 * | pic `size`, Model Center `aspect_ratio` or `size: "W:H"` | `generationConfig.imageConfig.aspectRatio` (one of IMAGE_ASPECTS) |
 * | `resolution` 1k/2k/4k | `imageConfig.imageSize` 1K/2K/4K where the model has it; 1k only where not |
 * | `image_urls`, `reference_images` | `inlineData` parts after the text, read through ctx.readMedia |
 * | Model Center `n` | 1 only |
 * | anything else (`size: "WxH"`, `quality`, videos, audios, frames, ...) | refused |
 */
import type { MediaRef } from '../../contract/media-refs.js';
import type { Refusal, RequestedJob } from '../types.js';
import { IMAGE_ASPECTS, imageRulesOf, type ImageModelRules } from './models.js';

export interface ImageCall {
  model: string;
  prompt: string;
  aspectRatio: string;
  /** Sent only where the model has the field. */
  imageSize?: '1K' | '2K' | '4K';
  images: MediaRef[];
  rules: ImageModelRules;
}

const PIC_FIELDS = new Set(['prompt', 'image_urls', 'size', 'resolution']);
const MODEL_CENTER_FIELDS = new Set(['prompt', 'image_urls', 'reference_images', 'size', 'aspect_ratio', 'resolution', 'n']);

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v.trim() : undefined);

/** The generateContent call for an image request, or why it cannot be made. */
export function imageCallOf(job: RequestedJob): ImageCall | Refusal {
  const model = job.upstreamModel;
  const known = job.family === 'pic' ? PIC_FIELDS : MODEL_CENTER_FIELDS;
  const unknown = Object.keys(job.params).find((k) => !known.has(k) && !isEmpty(job.params[k]));
  if (unknown !== undefined) return { field: unknown, message: `the Gemini API has no such input for image model ${model}` };
  const p = job.params;
  if (p.n !== undefined && Number(p.n) !== 1) return { field: 'n', message: `n ${String(p.n)}: a task makes one image (n 1)` };
  const rules = imageRulesOf(model);
  const aspectField = job.family === 'pic' || str(p.aspect_ratio) === undefined ? 'size' : 'aspect_ratio';
  const aspect = str(p[aspectField]) ?? '1:1';
  if (!(IMAGE_ASPECTS as readonly string[]).includes(aspect)) {
    const why = /x|\*/i.test(aspect) ? 'Gemini image models take an aspect ratio, not pixels' : 'not an aspect ratio Gemini image models make';
    return { field: aspectField, message: `${aspectField} ${aspect}: ${why} (${IMAGE_ASPECTS.join(', ')})` };
  }
  const resolution = (str(p.resolution) ?? '1k').toLowerCase();
  const size = ({ '1k': '1K', '2k': '2K', '4k': '4K' } as const)[resolution as '1k' | '2k' | '4k'];
  if (size === undefined) return { field: 'resolution', message: `resolution ${resolution}: Gemini image models take 1k, 2k or 4k` };
  if (size !== '1K' && !rules.imageSizes.includes(size)) {
    return { field: 'resolution', message: `resolution ${resolution}: ${model} makes 1k images only (no imageSize)` };
  }
  const images = job.media.images;
  if (images.length > rules.maxImages) {
    return { field: images[rules.maxImages]!.field, message: `${model} takes at most ${rules.maxImages} reference images` };
  }
  const other = [job.media.firstFrame, job.media.lastFrame, ...job.media.videos, ...job.media.audios].find((r) => r !== undefined);
  if (other) return { field: other.field, message: `${model} takes reference images only` };
  const prompt = typeof p.prompt === 'string' ? p.prompt : '';
  return { model, prompt, aspectRatio: aspect, images, rules, ...(rules.imageSizes.length > 0 && { imageSize: size }) };
}
