import { Type, type TSchema } from '../typebox.js';
import { AppError, invalidField } from '../errors.js';
import { mediaRefs, refsOf } from './media-refs.js';
import { motionPromptProblem } from './motion-prompt.js';
import { videoOutput, type OutputSpec } from './output.js';
import { assertGroupsExclusive, assertRange } from './rules.js';
import { MediaUrl, StringEnum, toInteger } from './schema-helpers.js';
import type { MediaRefs } from './media-refs.js';

/**
 * The three fully specified Model Center models (docs/reference/api/model-center.md#the-three-fully-specified-models)
 * and their media rules. The route schema checks types,
 * enums and counts per model (`sdThenSchema`); `planSdTask` checks the cross-field rules.
 */
export interface SdModelSpec {
  maxImages: number;
  maxVideos: number;
  maxAudios: number;
  duration: { min: number; max: number; default: number };
  resolutions: readonly string[];
  /** Whether the model takes `watermark` (only sd_2.0_fast_discount). */
  watermark: boolean;
  /** Names the reference images may be sent under; the first is canonical (D18). */
  imageFields: readonly string[];
}

export const SD_ASPECT_RATIOS = ['16:9', '9:16', '1:1', 'adaptive', '4:3', '3:4', '21:9'] as const;
/** Names of reference images in the `sd_2.0_mini_special` table note; canonical first. */
export const SD_IMAGE_ALIASES = ['reference_images', 'image_urls', 'referenceImages', 'images'] as const;

export const SD_MODELS: Readonly<Record<string, SdModelSpec>> = {
  'sd_2.0_fast_discount': {
    maxImages: 9,
    maxVideos: 3,
    maxAudios: 3,
    duration: { min: 4, max: 15, default: 5 },
    resolutions: ['480p', '720p'],
    watermark: true,
    imageFields: ['reference_images'],
  },
  'sd_2.0_mini_special': {
    maxImages: 9,
    maxVideos: 3,
    maxAudios: 3,
    duration: { min: 4, max: 15, default: 5 },
    resolutions: ['720p'],
    watermark: false,
    imageFields: SD_IMAGE_ALIASES,
  },
  'sd_2.5_special_v1': {
    maxImages: 30,
    maxVideos: 10,
    maxAudios: 10,
    duration: { min: 4, max: 30, default: 4 },
    resolutions: ['720p', '1080p'],
    watermark: false,
    imageFields: ['reference_images'],
  },
};

const urls = (max: number, what: string): TSchema => Type.Array(MediaUrl(`${what} URL`), { maxItems: max, description: `${what}, at most ${max}` });

/**
 * The per-model part of the route schema, applied with `if model = id then ...` (types shared by
 * every model are in the route's base schema; `duration` there accepts an integer or digits).
 */
export function sdThenSchema(id: string): TSchema {
  const spec = SD_MODELS[id]!;
  const images = Object.fromEntries(spec.imageFields.map((f) => [f, Type.Optional(urls(spec.maxImages, 'reference images'))]));
  return Type.Object(
    {
      ...images,
      reference_videos: Type.Optional(urls(spec.maxVideos, 'reference videos')),
      reference_audios: Type.Optional(urls(spec.maxAudios, 'reference audios')),
      aspect_ratio: Type.Optional(StringEnum(SD_ASPECT_RATIOS, { description: 'default 16:9' })),
      resolution: Type.Optional(StringEnum(spec.resolutions, { description: 'default 720p' })),
      seed: Type.Optional(Type.Integer({ minimum: -1, maximum: 4_294_967_295, description: '-1 (default) picks a random seed' })),
      first_image: Type.Optional(urls(1, 'first frame image')),
      last_image: Type.Optional(urls(1, 'last frame image')),
      generate_audio: Type.Optional(Type.Boolean({ description: 'default true' })),
      tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'official tool configuration, passed on' })),
      ...(spec.watermark && { watermark: Type.Optional(Type.Boolean({ description: 'default false' })) }),
    },
    { additionalProperties: true },
  );
}

const sent = (body: Record<string, unknown>, field: string): boolean => body[field] !== undefined && body[field] !== null;
const list = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : []);

/** The reference-image field the caller used (D18: two names at once is a 400). */
function imageField(id: string, spec: SdModelSpec, body: Record<string, unknown>): string {
  const used = spec.imageFields.filter((f) => sent(body, f));
  if (used.length > 1) {
    throw new AppError('exclusive_fields', `${used.join(' and ')} are names of the same field (reference images); send only one of them`, {
      param: used.join(','),
    });
  }
  const foreign = SD_IMAGE_ALIASES.find((f) => !spec.imageFields.includes(f) && sent(body, f));
  if (foreign) throw invalidField(foreign, `${foreign} is not a field of ${id}; send reference images as reference_images`);
  return used[0] ?? spec.imageFields[0]!;
}

/**
 * What an sd model's task stores as its parameters (G405): the table's fields with their defaults,
 * the reference images as `reference_images` whatever name they came under, any other field as
 * sent (D11).
 */
export type SdParams = {
  prompt: string;
  reference_images: string[];
  reference_videos: string[];
  reference_audios: string[];
  duration: number;
  aspect_ratio: string;
  resolution: string;
  seed: number;
  first_image: string[];
  last_image: string[];
  generate_audio: boolean;
  watermark?: boolean;
} & { [field: string]: unknown };

export interface SdPlan {
  params: SdParams;
  output: OutputSpec;
  media: MediaRefs;
}

/**
 * Cross-field rules and defaults of an sd model, for a body the route schema accepted. Fields the
 * table does not list are passed on unchanged (D11); alias names become
 * `reference_images`.
 */
export function planSdTask(id: string, body: Record<string, unknown>): SdPlan {
  const spec = SD_MODELS[id];
  if (!spec) throw new Error(`${id} is not an sd model`);
  const prompt = body.prompt as string;
  const problem = motionPromptProblem(prompt);
  if (problem) throw invalidField('prompt', problem.startsWith('is ') ? `prompt ${problem}` : `prompt is too long: ${problem}`);
  if (!spec.watermark && sent(body, 'watermark')) throw invalidField('watermark', `watermark is not supported by ${id}`);

  const imagesField = imageField(id, spec, body);
  const images = list(body[imagesField]);
  const videos = list(body.reference_videos);
  const audios = list(body.reference_audios);
  const first = list(body.first_image);
  const last = list(body.last_image);

  assertGroupsExclusive(
    body,
    ['first_image', 'last_image'],
    [imagesField, 'reference_videos', 'reference_audios'],
    'the first-frame, first/last-frame and multimodal reference scenarios cannot be mixed',
  );
  if (last.length > 0 && first.length === 0) throw invalidField('last_image', 'last_image requires first_image');
  if (audios.length > 0 && images.length === 0 && videos.length === 0) {
    throw invalidField('reference_audios', `reference_audios needs at least 1 reference image or video (${imagesField} or reference_videos)`);
  }

  const duration = toInteger(body.duration as number | string | undefined) ?? spec.duration.default;
  assertRange('duration', duration, spec.duration.min, spec.duration.max, ` for ${id}`);
  const aspectRatio = (body.aspect_ratio as string | undefined) ?? '16:9';
  const resolution = (body.resolution as string | undefined) ?? '720p';
  const generateAudio = (body.generate_audio as boolean | undefined) ?? true;

  const { model: _model, ...rest } = body;
  for (const alias of spec.imageFields) delete rest[alias];
  const params: SdParams = {
    ...rest,
    prompt,
    reference_images: images,
    reference_videos: videos,
    reference_audios: audios,
    duration,
    aspect_ratio: aspectRatio,
    resolution,
    seed: (body.seed as number | undefined) ?? -1,
    first_image: first,
    last_image: last,
    generate_audio: generateAudio,
    ...(spec.watermark && { watermark: (body.watermark as boolean | undefined) ?? false }),
  };
  const media = mediaRefs({
    ...(first[0] !== undefined && { firstFrame: { url: first[0], field: 'first_image[0]' } }),
    ...(last[0] !== undefined && { lastFrame: { url: last[0], field: 'last_image[0]' } }),
    images: refsOf(imagesField, images),
    videos: refsOf('reference_videos', videos),
    audios: refsOf('reference_audios', audios),
  });
  return { params, output: videoOutput(resolution, aspectRatio, duration, generateAudio), media };
}
