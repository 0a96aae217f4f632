import { Type, type Static } from '../typebox.js';
import { invalidField } from '../errors.js';
import { findModel, priceTask } from './catalog.js';
import { mediaRefs, refsOf, type MediaRef } from './media-refs.js';
import { videoOutput } from './output.js';
import { assertExclusive, assertGroupsExclusive, assertOneOf, assertRequires } from './rules.js';
import { IntegerLike, MediaUrl, StringEnum, toInteger, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

/** Form A model (`{api_base_url}/clip/videos`); also the model when `model` is missing (D2). */
export const CLIP_FORM_A_MODELS = ['clip3.1-fast'] as const;
/** Form B models (`{base_url}/clip/videos`). */
export const CLIP_FORM_B_MODELS = ['clip_3_1_fast_stable', 'clip_3_1_pro_stable', 'clip_3_1_fast', 'clip_3_1_pro'] as const;
export const CLIP_MODELS = [...CLIP_FORM_A_MODELS, ...CLIP_FORM_B_MODELS] as const;
export type ClipModel = (typeof CLIP_MODELS)[number];
export const CLIP_DEFAULT_MODEL: ClipModel = 'clip3.1-fast';

/** Form A `size` values; the first is the default. */
export const CLIP_SIZES = ['1280x720', '720x1280'] as const;
export const CLIP_ASPECT_RATIOS = ['16:9', '9:16'] as const;
/** Form B `resolution` values (canonical spelling; matched case-insensitively); the first is the default. */
export const CLIP_RESOLUTIONS = ['720p', '1080p', '4K'] as const;
/** Every accepted spelling of a Form B resolution (case-insensitive). */
export const CLIP_RESOLUTION_SPELLINGS = ['720p', '720P', '1080p', '1080P', '4K', '4k'] as const;
/** Form B models that render 4K; the `_stable` ones refuse it. */
export const CLIP_4K_MODELS: readonly string[] = ['clip_3_1_fast', 'clip_3_1_pro'];
/** The only output length: every clip video is 8 seconds (docs/reference/api/clip.md). */
export const CLIP_DURATIONS = [8] as const;
export const CLIP_DURATION_SEC = 8;
/** Most reference images any clip request may carry (Limits). */
export const CLIP_MAX_REFERENCE_IMAGES = 3;
/**
 * Reference images per model: `clip_3_1_fast_stable` is first/last-frame only; `clip_3_1_pro` is
 * "not shown" in the contract and takes 3 like its siblings (decision taken here).
 */
export const CLIP_REFERENCE_LIMITS: Readonly<Record<ClipModel, number>> = {
  'clip3.1-fast': 3,
  clip_3_1_fast_stable: 0,
  clip_3_1_pro_stable: 3,
  clip_3_1_fast: 3,
  clip_3_1_pro: 3,
};

const ReferenceList = (description: string) => Type.Array(MediaUrl('reference image URL'), { maxItems: CLIP_MAX_REFERENCE_IMAGES, description });

/**
 * One body schema for both forms (they share `/clip/videos` when prefixes are empty): every field
 * of either form with its type and values; which form applies is decided by `model` in the plan.
 */
export const ClipCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: Type.Optional(StringEnum(CLIP_MODELS, { description: 'Form A: clip3.1-fast (default); Form B: the four clip_3_1_* models' })),
    prompt: Type.String({ minLength: 1, maxLength: 20_000, description: 'Text describing the video' }),
    size: Type.Optional(StringEnum(CLIP_SIZES, { description: 'Form A only: 1280x720 (default) or 720x1280; exclusive with aspect_ratio' })),
    aspect_ratio: Type.Optional(StringEnum(CLIP_ASPECT_RATIOS, { description: '16:9 (default) or 9:16, a pure ratio; exclusive with size' })),
    resolution: Type.Optional(
      StringEnum(CLIP_RESOLUTION_SPELLINGS, { description: 'Form B only: 720p (default), 1080p, 4K (clip_3_1_fast, clip_3_1_pro); case-insensitive' }),
    ),
    duration: Type.Optional(IntegerLike('only 8 (integer or string of digits); exclusive with seconds')),
    seconds: Type.Optional(IntegerLike('only 8 (integer or string of digits); exclusive with duration')),
    input_reference: Type.Optional(ReferenceList('Reference images, at most 3; exclusive with image_urls and with the frame fields')),
    image_urls: Type.Optional(ReferenceList('Reference images, at most 3; exclusive with input_reference and with the frame fields')),
    first_image: Type.Optional(MediaUrl('first frame image URL')),
    last_image: Type.Optional(MediaUrl('last frame image URL; requires first_image')),
  },
  { additionalProperties: true },
);

export type ClipCreateBody = Static<typeof ClipCreateBody>;

/** Stored parameters both clip forms share: the prompt, the length, reference images or frames. */
const clipCommonParams = {
  prompt: ClipCreateBody.properties.prompt,
  duration: Type.Integer({ description: 'seconds: always 8' }),
  input_reference: ClipCreateBody.properties.input_reference,
  image_urls: ClipCreateBody.properties.image_urls,
  first_image: ClipCreateBody.properties.first_image,
  last_image: ClipCreateBody.properties.last_image,
};

/**
 * What a Form A clip task stores as its parameters (`planClipTask`) and its provider is given
 * (G405): the orientation as both `size` and `aspect_ratio`, 720p, and the common fields.
 */
export const ClipFormAParams = Type.Object(
  {
    ...clipCommonParams,
    size: StringEnum(CLIP_SIZES),
    aspect_ratio: StringEnum(CLIP_ASPECT_RATIOS),
    resolution: Type.Literal('720p'),
  },
  { additionalProperties: false },
);

export type ClipFormAParams = Static<typeof ClipFormAParams>;

/** What a Form B clip task stores (G405): `aspect_ratio`, the resolution in its canonical spelling, no `size`. */
export const ClipFormBParams = Type.Object(
  {
    ...clipCommonParams,
    aspect_ratio: StringEnum(CLIP_ASPECT_RATIOS),
    resolution: StringEnum(CLIP_RESOLUTIONS),
  },
  { additionalProperties: false },
);

export type ClipFormBParams = Static<typeof ClipFormBParams>;

/** A clip request as a task holds it: the form and that form's parameters. */
export type ClipRequest = { family: 'clip'; form: 'A'; params: ClipFormAParams } | { family: 'clip'; form: 'B'; params: ClipFormBParams };

/** The form a clip model belongs to. */
export function clipFormOf(model: ClipModel): 'A' | 'B' {
  return (CLIP_FORM_A_MODELS as readonly string[]).includes(model) ? 'A' : 'B';
}

/**
 * `duration`/`seconds` (D10, D13): at most one of the two, its value one of `allowed`,
 * else `fallback`. Shared by clip and reel.
 */
export function planDuration(
  body: { duration?: number | string; seconds?: number | string },
  allowed: readonly number[],
  fallback: number,
  context: string,
): number {
  assertExclusive(body, 'duration', 'seconds');
  const field = body.duration !== undefined ? 'duration' : 'seconds';
  const value = toInteger(body.duration ?? body.seconds);
  if (value === undefined) return fallback;
  assertOneOf(field, value, allowed, context);
  return value;
}

/** The reference-image field used (`input_reference` or `image_urls`) and its URLs, after the exclusive check. */
export function referenceField(body: { input_reference?: string[]; image_urls?: string[] }): { field: 'input_reference' | 'image_urls'; urls: string[] } {
  assertExclusive(body, 'input_reference', 'image_urls');
  return body.input_reference !== undefined ? { field: 'input_reference', urls: body.input_reference } : { field: 'image_urls', urls: body.image_urls ?? [] };
}

/** The reference images as a task stores them: under the field the caller used; none when there are none. */
export function referenceParams(refs: { field: 'input_reference' | 'image_urls'; urls: string[] }): { input_reference?: string[]; image_urls?: string[] } {
  if (refs.urls.length === 0) return {};
  return refs.field === 'input_reference' ? { input_reference: refs.urls } : { image_urls: refs.urls };
}

const frameRef = (field: string, url: string | undefined): MediaRef | undefined => (url === undefined ? undefined : { url, field });

/** Turns a schema-valid clip request (either form) into what is stored and what must be produced. */
export function planClipTask(body: ClipCreateBody): ClipRequest & PlanFacts {
  const model: ClipModel = body.model ?? CLIP_DEFAULT_MODEL;
  const form = clipFormOf(model);
  const duration = planDuration(body, CLIP_DURATIONS, CLIP_DURATION_SEC, ' (clip videos are always 8 seconds long)');
  const refs = referenceField(body);
  assertRequires(body, 'last_image', 'first_image');
  assertGroupsExclusive(
    body,
    ['first_image', 'last_image'],
    ['input_reference', 'image_urls'],
    'first/last-frame mode and reference-image mode are separate modes; send frames or reference images, not both',
  );
  const limit = CLIP_REFERENCE_LIMITS[model];
  if (limit === 0 && refs.urls.length > 0) {
    throw invalidField(
      refs.field,
      `${model} supports first/last-frame mode only and does not accept reference images (${refs.field}); use first_image and last_image, or a model with reference images`,
    );
  }
  if (refs.urls.length > limit) throw invalidField(refs.field, `${refs.field} allows at most ${limit} items for ${model} (got ${refs.urls.length})`);

  assertExclusive(body, 'size', 'aspect_ratio');
  // the fields after the form's shape fields, in the order they are stored
  const rest = {
    duration,
    ...referenceParams(refs),
    ...(body.first_image !== undefined && { first_image: body.first_image }),
    ...(body.last_image !== undefined && { last_image: body.last_image }),
  };
  let request: ClipRequest;
  if (form === 'A') {
    if (body.resolution !== undefined) {
      throw invalidField(
        'resolution',
        `resolution is accepted only by the Form B models (${CLIP_FORM_B_MODELS.join(', ')}); ${model} renders 720p, choose its orientation with size or aspect_ratio`,
      );
    }
    const aspect = body.aspect_ratio ?? (body.size === '720x1280' ? '9:16' : '16:9');
    request = {
      family: 'clip',
      form,
      params: { prompt: body.prompt, size: aspect === '9:16' ? '720x1280' : '1280x720', aspect_ratio: aspect, resolution: '720p', ...rest },
    };
  } else {
    if (body.size !== undefined) {
      throw invalidField(
        'size',
        `size is accepted only by ${CLIP_DEFAULT_MODEL} (Form A); ${model} takes aspect_ratio (16:9, 9:16) and resolution (720p, 1080p, 4K)`,
      );
    }
    const resolution = CLIP_RESOLUTIONS.find((r) => r.toLowerCase() === (body.resolution ?? '720p').toLowerCase())!;
    if (resolution === '4K' && !CLIP_4K_MODELS.includes(model)) {
      throw invalidField('resolution', `resolution 4K is not available for ${model}; use 720p or 1080p (4K needs ${CLIP_4K_MODELS.join(' or ')})`);
    }
    request = { family: 'clip', form, params: { prompt: body.prompt, aspect_ratio: body.aspect_ratio ?? '16:9', resolution, ...rest } };
  }
  const firstFrame = frameRef('first_image', body.first_image);
  const lastFrame = frameRef('last_image', body.last_image);
  return {
    ...request,
    model,
    // D19: size by form fields, 8 s; clip has no generate_audio, so no audio track.
    output: videoOutput(request.params.resolution, request.params.aspect_ratio, duration, false),
    media: mediaRefs({ ...(firstFrame && { firstFrame }), ...(lastFrame && { lastFrame }), images: refsOf(refs.field, refs.urls) }),
    amount: priceTask(findModel(model)!),
  };
}
