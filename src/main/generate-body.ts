import { findModel, MODELS } from '../contract/catalog.js';
import type { FamilyId } from '../contract/families.js';
import { findModelCenterModel } from '../contract/model-center-catalog.js';
import { UsageError } from './cli-args.js';

/** The family flags of `mediagate generate image|video` (G237). */
export const FIELD_FLAGS = {
  size: { type: 'string' },
  resolution: { type: 'string' },
  'aspect-ratio': { type: 'string' },
  ratio: { type: 'string' },
  duration: { type: 'string' },
  image: { type: 'string', multiple: true },
  'first-image': { type: 'string' },
  'last-image': { type: 'string' },
  audio: { type: 'boolean' },
  'no-audio': { type: 'boolean' },
} as const;

export interface FieldValues {
  size?: string | undefined;
  resolution?: string | undefined;
  'aspect-ratio'?: string | undefined;
  ratio?: string | undefined;
  duration?: string | undefined;
  image?: string[] | undefined;
  'first-image'?: string | undefined;
  'last-image'?: string | undefined;
  audio?: boolean | undefined;
  'no-audio'?: boolean | undefined;
}

type Flag = keyof FieldValues;

/** What a model of `family` makes. */
const makesOf = (family: FamilyId, model: string): 'image' | 'video' =>
  family === 'pic' ? 'image' : family === 'model-center' ? (findModelCenterModel(model)?.kind ?? 'video') : 'video';

/** Which family serves `model`, and what it makes; a usage error for a model of the wrong kind or none. */
export function familyOf(kind: 'image' | 'video', model: string): FamilyId {
  const entry = findModel(model);
  if (!entry) {
    const models = MODELS.filter((m) => makesOf(m.family, m.id) === kind).map((m) => m.id);
    throw new UsageError(`--model ${model}: no such model; the ${kind} models: ${models.join(', ')}`);
  }
  const makes = makesOf(entry.family, model);
  if (makes !== kind) throw new UsageError(`--model ${model} makes ${makes === 'image' ? 'images' : 'videos'}; use \`mediagate generate ${makes}\``);
  return entry.family;
}

/** Flags each family takes (any other family flag is a usage error naming the family). */
const ACCEPTED: Record<FamilyId, readonly Flag[]> = {
  pic: ['size', 'resolution', 'image'],
  clip: ['size', 'aspect-ratio', 'resolution', 'duration', 'image', 'first-image', 'last-image'],
  reel: ['size', 'aspect-ratio', 'duration', 'image'],
  motion: ['ratio', 'aspect-ratio', 'duration', 'image', 'first-image', 'last-image', 'audio', 'no-audio'],
  videos: ['ratio', 'aspect-ratio', 'resolution', 'duration', 'image', 'first-image', 'last-image'],
  'model-center': ['aspect-ratio', 'resolution', 'duration', 'image', 'first-image', 'last-image', 'audio', 'no-audio'],
};
/** Model Center's image models (imagegen) take `size` (`WxH` or `W:H`), `aspect_ratio`, `resolution` and reference images. */
const MODEL_CENTER_IMAGE: readonly Flag[] = ['size', 'aspect-ratio', 'resolution', 'image'];

const acceptedBy = (family: FamilyId, model: string): readonly Flag[] =>
  family === 'model-center' && findModelCenterModel(model)?.kind === 'image' ? MODEL_CENTER_IMAGE : ACCEPTED[family];

function integer(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?[0-9]{1,4}$/.test(raw)) throw new UsageError(`--${flag} must be a whole number of seconds, got "${raw}"`);
  return Number(raw);
}

const defined = <T extends Record<string, unknown>>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * The create body of `family` from the prompt and the flags, named as the family names its fields
 * (`--aspect-ratio` is `ratio` in motion and videos; `--image` the reference images; motion's
 * images go into `content` with their roles). The gateway checks the values.
 */
export function bodyFor(family: FamilyId, model: string, prompt: string, v: FieldValues): Record<string, unknown> {
  const accepted = acceptedBy(family, model);
  for (const flag of Object.keys(v) as Flag[]) {
    if (v[flag] !== undefined && !accepted.includes(flag)) {
      throw new UsageError(`--${flag} is not a field of the ${family} family (${model}); it takes ${accepted.map((f) => `--${f}`).join(', ')}`);
    }
  }
  if (v.audio && v['no-audio']) throw new UsageError('--audio and --no-audio exclude each other');
  if (v.ratio !== undefined && v['aspect-ratio'] !== undefined) throw new UsageError('--ratio and --aspect-ratio are the same field here; give one');
  const audio = v.audio ? true : v['no-audio'] ? false : undefined;
  const duration = integer('duration', v.duration);
  const images = v.image && v.image.length > 0 ? v.image : undefined;
  switch (family) {
    case 'pic':
      return defined({ model, prompt, size: v.size, resolution: v.resolution, image_urls: images });
    case 'clip':
      return defined({
        model,
        prompt,
        size: v.size,
        aspect_ratio: v['aspect-ratio'],
        resolution: v.resolution,
        duration,
        image_urls: images,
        first_image: v['first-image'],
        last_image: v['last-image'],
      });
    case 'reel':
      return defined({ model, prompt, size: v.size, aspect_ratio: v['aspect-ratio'], duration, image_urls: images });
    case 'motion': {
      const content: unknown[] = [{ type: 'text', text: prompt }];
      if (v['first-image']) content.push({ type: 'image_url', image_url: { url: v['first-image'] }, role: 'first_frame' });
      if (v['last-image']) content.push({ type: 'image_url', image_url: { url: v['last-image'] }, role: 'last_frame' });
      for (const url of images ?? []) content.push({ type: 'image_url', image_url: { url }, role: 'reference_image' });
      return defined({ model, content, ratio: v.ratio ?? v['aspect-ratio'], duration, generate_audio: audio });
    }
    case 'videos':
      return defined({
        model,
        prompt,
        duration,
        ratio: v.ratio ?? v['aspect-ratio'],
        resolution: v.resolution,
        image: v['first-image'],
        lastFrameImage: v['last-image'],
        referenceImages: images,
      });
    case 'model-center':
      return defined({
        model,
        prompt,
        size: v.size,
        duration,
        aspect_ratio: v['aspect-ratio'],
        resolution: v.resolution,
        reference_images: images,
        generate_audio: audio,
        first_image: v['first-image'] && [v['first-image']],
        last_image: v['last-image'] && [v['last-image']],
      });
  }
}
