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
import { paramFields } from '../../contract/family-request.js';
import type { MediaRef } from '../../contract/media-refs.js';
import { imageAskOf } from '../toolkit/image-request.js';
import type { Refusal, RequestedJob } from '../types.js';
import { IMAGE_ASPECTS, imageRulesOf, type ImageModelRules } from './models.js';

export interface ImageCall {
  model: string;
  prompt: string;
  aspectRatio: string;
  /** The request field the aspect came in (`size`, or Model Center's `aspect_ratio`): named when Gemini refuses it. */
  aspectField: 'size' | 'aspect_ratio';
  /** Sent only where the model has the field. */
  imageSize?: '1K' | '2K' | '4K';
  images: MediaRef[];
  rules: ImageModelRules;
}

const PIC_FIELDS = new Set(['prompt', 'image_urls', 'size', 'resolution']);
const MODEL_CENTER_FIELDS = new Set(['prompt', 'image_urls', 'reference_images', 'size', 'aspect_ratio', 'resolution', 'n']);

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

/** The generateContent call for an image request, or why it cannot be made. */
export function imageCallOf(job: RequestedJob): ImageCall | Refusal {
  const model = job.upstreamModel;
  // images are pic's and Model Center's (the provider serves clip too, whose tasks make videos)
  if (job.family !== 'pic' && job.family !== 'model-center')
    return { field: 'model', message: `model ${job.model}: Gemini image models make pic and Model Center images` };
  const known = job.family === 'pic' ? PIC_FIELDS : MODEL_CENTER_FIELDS;
  const params = paramFields(job.params);
  const unknown = Object.keys(params).find((k) => !known.has(k) && !isEmpty(params[k]));
  if (unknown !== undefined) return { field: unknown, message: `the Gemini API has no such input for image model ${model}` };
  const asked = imageAskOf(job);
  if (asked.n !== undefined && Number(asked.n) !== 1) return { field: 'n', message: `n ${String(asked.n)}: a task makes one image (n 1)` };
  const rules = imageRulesOf(model);
  const aspectField = asked.aspectField;
  const aspect = asked.aspect ?? '1:1';
  if (!(IMAGE_ASPECTS as readonly string[]).includes(aspect)) {
    const why = /x|\*/i.test(aspect) ? 'Gemini image models take an aspect ratio, not pixels' : 'not an aspect ratio Gemini image models make';
    return { field: aspectField, message: `${aspectField} ${aspect}: ${why} (${IMAGE_ASPECTS.join(', ')})` };
  }
  const resolution = (asked.resolution ?? '1k').toLowerCase();
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
  return { model, prompt: asked.prompt, aspectRatio: aspect, aspectField, images, rules, ...(rules.imageSizes.length > 0 && { imageSize: size }) };
}
