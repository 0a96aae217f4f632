import { Type, type Static } from '../typebox.js';
import { findModel, priceTask } from './catalog.js';
import { mediaRefs, refsOf } from './media-refs.js';
import { videoOutput } from './output.js';
import { assertGroupsExclusive, assertRange, assertRequires } from './rules.js';
import { IntegerLike, MediaUrl, StringEnum, toInteger, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

export const VIDEOS_MODELS = ['videos', 'videos_fast'] as const;
export const VIDEOS_RATIOS = ['16:9', '9:16'] as const;
export const VIDEOS_RESOLUTIONS = ['720p'] as const;
export const VIDEOS_PROMPT_MAX = 1500;
export const VIDEOS_MIN_DURATION = 4;
export const VIDEOS_MAX_DURATION = 15;
export const VIDEOS_MAX_REFERENCE_IMAGES = 4;
export const VIDEOS_MAX_REFERENCE_VIDEOS = 3;
/** First/last-frame mode fields, and reference mode fields: the two modes are never combined. */
export const VIDEOS_FRAME_FIELDS = ['image', 'lastFrameImage'] as const;
export const VIDEOS_REFERENCE_FIELDS = ['referenceImages', 'referenceVideos'] as const;

export const VideosCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: StringEnum(VIDEOS_MODELS, { description: 'Videos model' }),
    prompt: Type.String({ minLength: 1, maxLength: VIDEOS_PROMPT_MAX, description: 'At most 1500 characters' }),
    duration: IntegerLike('seconds 4-15, an integer or a string of digits'),
    ratio: Type.Optional(StringEnum(VIDEOS_RATIOS, { description: 'Default 16:9' })),
    resolution: Type.Optional(StringEnum(VIDEOS_RESOLUTIONS, { description: '720p (default; the only value)' })),
    image: Type.Optional(MediaUrl('first frame URL; must be sent with lastFrameImage')),
    lastFrameImage: Type.Optional(MediaUrl('last frame URL; must be sent with image')),
    referenceImages: Type.Optional(
      Type.Array(MediaUrl('reference image URL'), { maxItems: VIDEOS_MAX_REFERENCE_IMAGES, description: 'At most 4 reference images' }),
    ),
    referenceVideos: Type.Optional(
      Type.Array(MediaUrl('reference video URL'), { maxItems: VIDEOS_MAX_REFERENCE_VIDEOS, description: 'At most 3 reference videos' }),
    ),
  },
  { additionalProperties: true },
);

export type VideosCreateBody = Static<typeof VideosCreateBody>;

/**
 * What a videos task stores as its parameters (`planVideosTask`) and its provider is given (G405):
 * the duration as a number, ratio and resolution with their defaults, the frames as sent, the
 * reference lists always present.
 */
export const VideosParams = Type.Object(
  {
    prompt: VideosCreateBody.properties.prompt,
    duration: Type.Integer({ minimum: VIDEOS_MIN_DURATION, maximum: VIDEOS_MAX_DURATION, description: 'seconds' }),
    ratio: StringEnum(VIDEOS_RATIOS),
    resolution: StringEnum(VIDEOS_RESOLUTIONS),
    image: VideosCreateBody.properties.image,
    lastFrameImage: VideosCreateBody.properties.lastFrameImage,
    referenceImages: Type.Array(MediaUrl('reference image URL'), { maxItems: VIDEOS_MAX_REFERENCE_IMAGES }),
    referenceVideos: Type.Array(MediaUrl('reference video URL'), { maxItems: VIDEOS_MAX_REFERENCE_VIDEOS }),
  },
  { additionalProperties: false },
);

export type VideosParams = Static<typeof VideosParams>;

/** A videos request as a task holds it. */
export interface VideosRequest {
  family: 'videos';
  form: null;
  params: VideosParams;
}

/** Turns a schema-valid videos request into what is stored and what must be produced (no audio track). */
export function planVideosTask(body: VideosCreateBody): VideosRequest & PlanFacts {
  const fields = body as Record<string, unknown>;
  const duration = toInteger(body.duration)!;
  assertRange('duration', duration, VIDEOS_MIN_DURATION, VIDEOS_MAX_DURATION);
  assertRequires(fields, 'image', 'lastFrameImage');
  assertRequires(fields, 'lastFrameImage', 'image');
  assertGroupsExclusive(
    fields,
    VIDEOS_FRAME_FIELDS,
    VIDEOS_REFERENCE_FIELDS,
    'first/last-frame mode (image, lastFrameImage) and reference mode (referenceImages, referenceVideos) are exclusive',
  );
  const ratio = body.ratio ?? '16:9';
  const resolution = body.resolution ?? '720p';
  return {
    family: 'videos',
    form: null,
    model: body.model,
    params: {
      prompt: body.prompt,
      duration,
      ratio,
      resolution,
      ...(body.image !== undefined && { image: body.image }),
      ...(body.lastFrameImage !== undefined && { lastFrameImage: body.lastFrameImage }),
      referenceImages: body.referenceImages ?? [],
      referenceVideos: body.referenceVideos ?? [],
    },
    output: videoOutput(resolution, ratio, duration, false),
    media: mediaRefs({
      ...(body.image !== undefined && { firstFrame: { url: body.image, field: 'image' } }),
      ...(body.lastFrameImage !== undefined && { lastFrame: { url: body.lastFrameImage, field: 'lastFrameImage' } }),
      images: refsOf('referenceImages', body.referenceImages),
      videos: refsOf('referenceVideos', body.referenceVideos),
    }),
    amount: priceTask(findModel(body.model)!),
  };
}
