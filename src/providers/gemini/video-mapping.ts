/**
 * The declared mapping of a Veo model (G145): each field of a `clip` or Model Center
 * video request becomes part of a `predictLongRunning` call, or the request is refused naming it
 * (G128: 480p, durations other than the model's, ratios other than 16:9 and 9:16, an audio or video
 * reference, `generate_audio` the model cannot honour, a last frame where the model has none).
 *
 * | request field | predictLongRunning |
 * |---|---|
 * | `prompt` | `instances[0].prompt` |
 * | `aspect_ratio` (clip `size`) | `parameters.aspectRatio` 16:9 / 9:16 |
 * | `resolution` | `parameters.resolution` 720p / 1080p / 4k (above 720p at 8 s only) |
 * | `duration` / `seconds` | `parameters.durationSeconds` 4 / 6 / 8 (Veo 2: 6 / 8) |
 * | `first_image` | `instances[0].image` (base64) |
 * | `last_image` | `instances[0].lastFrame` (Veo 3.1, Veo 2) |
 * | clip `image_urls` / `input_reference`, Model Center `image_urls` / `reference_images` | `instances[0].referenceImages[]` as `asset` (Veo 3.1, at most 3, 8 s) |
 * | Model Center `generate_audio` | nothing is sent (the Gemini API takes none): true is refused on Veo 2, false on Veo 3+ |
 * | Model Center `negative_prompt`, `person_generation` | `parameters.negativePrompt`, `parameters.personGeneration` |
 * | anything else (`seed`, audios, videos, ...) | refused |
 */
import { paramFields } from '../../contract/family-request.js';
import type { MediaRef } from '../../contract/media-refs.js';
import type { Refusal, RequestedJob } from '../types.js';
import { veoRulesOf, type VeoRules } from './models.js';

export interface VideoCall {
  model: string;
  prompt: string;
  parameters: {
    aspectRatio: '16:9' | '9:16';
    durationSeconds: number;
    resolution: '720p' | '1080p' | '4k';
    negativePrompt?: string;
    personGeneration?: string;
  };
  firstFrame?: MediaRef;
  lastFrame?: MediaRef;
  references: MediaRef[];
  rules: VeoRules;
}

const CLIP_FIELDS = new Set(['prompt', 'size', 'aspect_ratio', 'resolution', 'duration', 'image_urls', 'input_reference', 'first_image', 'last_image']);
const MODEL_CENTER_FIELDS = new Set([
  'prompt',
  'aspect_ratio',
  'resolution',
  'duration',
  'generate_audio',
  'image_urls',
  'reference_images',
  'first_image',
  'last_image',
  'reference_videos',
  'reference_audios',
  'negative_prompt',
  'person_generation',
]);
const PERSON_GENERATION = ['allow_all', 'allow_adult', 'dont_allow'];

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v.trim() : undefined);

/** The predictLongRunning call for a video request, or why it cannot be made. */
export function videoCallOf(job: RequestedJob): VideoCall | Refusal {
  const model = job.upstreamModel;
  // videos are clip's and Model Center's (the provider serves pic too, whose tasks make images)
  if (job.family !== 'clip' && job.family !== 'model-center') return { field: 'model', message: `model ${job.model}: Veo makes clip and Model Center videos` };
  const known = job.family === 'clip' ? CLIP_FIELDS : MODEL_CENTER_FIELDS;
  const params = paramFields(job.params);
  const unknown = Object.keys(params).find((k) => !known.has(k) && !isEmpty(params[k]));
  if (unknown !== undefined) return { field: unknown, message: `Veo on the Gemini API has no such input (model ${model})` };
  const rules = veoRulesOf(model);
  const p = job.params;
  // fields only Model Center has: `generate_audio`, and the model's own fields passed on as sent (D11)
  const extra = job.family === 'model-center' ? job.params : undefined;
  const output = job.output;
  if (output.kind !== 'video') return { field: 'model', message: `model ${job.model} makes images; ${model} makes videos` };

  const aspect = str(p.aspect_ratio) ?? (output.width >= output.height ? '16:9' : '9:16');
  if (aspect !== '16:9' && aspect !== '9:16') return { field: 'aspect_ratio', message: `aspect_ratio ${aspect}: Veo makes 16:9 or 9:16` };
  const resolution = (str(p.resolution) ?? '720p').toLowerCase();
  if (!(rules.resolutions as readonly string[]).includes(resolution)) {
    return { field: 'resolution', message: `resolution ${str(p.resolution)}: ${model} makes ${rules.resolutions.join(' or ')}` };
  }
  const duration = output.durationSec;
  // clip stores its length as `duration` (the caller may have sent `seconds`)
  const durationField = p.duration !== undefined || job.family === 'model-center' ? 'duration' : 'seconds';
  if (!rules.durations.includes(duration)) {
    return { field: durationField, message: `duration ${duration}: ${model} makes videos of ${rules.durations.join(', ')} seconds` };
  }
  if (resolution !== '720p' && duration !== rules.longOnly) {
    return { field: 'resolution', message: `resolution ${resolution}: ${model} makes it only at ${rules.longOnly} seconds (duration ${duration} asked)` };
  }
  const audio = extra?.generate_audio;
  if (audio === true && !rules.audio) return { field: 'generate_audio', message: `generate_audio true: ${model} makes silent videos` };
  if (audio === false && rules.audio)
    return { field: 'generate_audio', message: `generate_audio false: ${model} always makes sound (the Gemini API cannot turn it off)` };
  const person = str(extra?.person_generation);
  if (person !== undefined && !PERSON_GENERATION.includes(person)) {
    return { field: 'person_generation', message: `person_generation ${person}: Veo takes ${PERSON_GENERATION.join(', ')}` };
  }
  const { firstFrame, lastFrame, images: references, videos, audios } = job.media;
  const other = [...videos, ...audios][0];
  if (other) return { field: other.field, message: `${model} takes no ${videos.length > 0 ? 'video' : 'audio'} references` };
  if (lastFrame && !rules.lastFrame) return { field: lastFrame.field, message: `${model} has no last frame (Veo 3.1 and Veo 2 do)` };
  if (lastFrame && !firstFrame) return { field: lastFrame.field, message: `${model} takes a last frame only with a first frame` };
  if (references.length > rules.maxReferences) {
    const first = references[rules.maxReferences]!;
    return {
      field: first.field,
      message: rules.maxReferences === 0 ? `${model} takes no reference images` : `${model} takes at most ${rules.maxReferences} reference images`,
    };
  }
  if (references.length > 0 && (firstFrame || lastFrame))
    return { field: references[0]!.field, message: `${model} takes reference images or frames, not both` };
  if (references.length > 0 && duration !== rules.longOnly)
    return { field: references[0]!.field, message: `${model} takes reference images only for ${rules.longOnly}-second videos` };
  const negative = str(extra?.negative_prompt);
  return {
    model,
    prompt: p.prompt,
    parameters: {
      aspectRatio: aspect,
      durationSeconds: duration,
      resolution: resolution as VideoCall['parameters']['resolution'],
      ...(negative && { negativePrompt: negative }),
      ...(person !== undefined && { personGeneration: person }),
    },
    ...(firstFrame && { firstFrame }),
    ...(lastFrame && { lastFrame }),
    references,
    rules,
  };
}
