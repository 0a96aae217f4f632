import { Type, type Static } from '../typebox.js';
import { invalidField } from '../errors.js';
import { findModel, priceTask } from './catalog.js';
import { planDuration, referenceField, referenceParams } from './clip.js';
import { mediaRefs, refsOf } from './media-refs.js';
import { videoOutput } from './output.js';
import { assertExclusive } from './rules.js';
import { IntegerLike, MediaUrl, StringEnum, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

/** Rules of one reel model: its form, allowed durations (first = default, the smallest) and image limit. */
export interface ReelModelRules {
  form: 'A' | 'B';
  durations: readonly number[];
  maxImages: number;
}

const FORM_A_IMAGES = 3;
const FORM_B_IMAGES = 1;
const formA = (durations: readonly number[]): ReelModelRules => ({ form: 'A', durations, maxImages: FORM_A_IMAGES });
const formB: ReelModelRules = { form: 'B', durations: [4, 8, 12], maxImages: FORM_B_IMAGES };

/**
 * Every reel model with its rules. `reelOa2`, `reelOa2Stable` (overview) follow Form B, `reel2Stable`
 * (overview) follows Form A. The image limit for `image_urls` is "not shown": the same as
 * `input_reference` (3 in Form A, 1 in Form B; decision taken here).
 */
export const REEL_MODEL_RULES = {
  'reel-2': formA([10, 15]),
  'reel-2-stable': formA([10, 15]),
  'reel-2-pro': formA([10, 15, 25]),
  reel2Stable: formA([10, 15]),
  reelOa2Plus: formB,
  reelOa2Pro: formB,
  reelOa2: formB,
  reelOa2Stable: formB,
} as const satisfies Record<string, ReelModelRules>;

export type ReelModel = keyof typeof REEL_MODEL_RULES;
export const REEL_MODELS = Object.keys(REEL_MODEL_RULES) as ReelModel[];
/** `size` values; the first is the default. */
export const REEL_SIZES = ['720x1280', '1280x720'] as const;
export const REEL_ASPECT_RATIOS = ['16:9', '9:16'] as const;
/** Most reference images any reel request may carry (Form A); Form B models allow 1. */
export const REEL_MAX_REFERENCE_IMAGES = FORM_A_IMAGES;

const ReferenceList = (description: string) => Type.Array(MediaUrl('reference image URL'), { maxItems: REEL_MAX_REFERENCE_IMAGES, description });

/** One body schema for both forms (they share `/reel/videos` when prefixes are empty); the form follows `model`. */
export const ReelCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: StringEnum(REEL_MODELS, {
      description: 'Form A: reel-2, reel-2-stable, reel-2-pro, reel2Stable; Form B: reelOa2Plus, reelOa2Pro, reelOa2, reelOa2Stable',
    }),
    prompt: Type.String({ minLength: 1, maxLength: 20_000, description: 'Text describing the video' }),
    size: Type.Optional(StringEnum(REEL_SIZES, { description: '720x1280 (default) or 1280x720; exclusive with aspect_ratio' })),
    aspect_ratio: Type.Optional(StringEnum(REEL_ASPECT_RATIOS, { description: '16:9 or 9:16; exclusive with size' })),
    duration: Type.Optional(IntegerLike('seconds: Form A 10 or 15 (25 for reel-2-pro), Form B 4, 8 or 12; exclusive with seconds')),
    seconds: Type.Optional(IntegerLike('same values as duration; exclusive with duration')),
    input_reference: Type.Optional(ReferenceList('Reference images: Form A at most 3, Form B at most 1; exclusive with image_urls')),
    image_urls: Type.Optional(ReferenceList('Reference images: Form A at most 3, Form B at most 1; exclusive with input_reference')),
  },
  { additionalProperties: true },
);

export type ReelCreateBody = Static<typeof ReelCreateBody>;

/**
 * What a reel task of either form stores as its parameters (`planReelTask`) and its provider is
 * given (G405): the orientation as both `size` and `aspect_ratio`, the length in seconds, and the
 * reference images under the field the caller used.
 */
export const ReelParams = Type.Object(
  {
    prompt: ReelCreateBody.properties.prompt,
    size: StringEnum(REEL_SIZES),
    aspect_ratio: StringEnum(REEL_ASPECT_RATIOS),
    duration: Type.Integer({ description: 'seconds' }),
    input_reference: ReelCreateBody.properties.input_reference,
    image_urls: ReelCreateBody.properties.image_urls,
  },
  { additionalProperties: false },
);

export type ReelParams = Static<typeof ReelParams>;

/** A reel request as a task holds it: the model's form (the parameters are the same in both). */
export interface ReelRequest {
  family: 'reel';
  form: 'A' | 'B';
  params: ReelParams;
}

/** Turns a schema-valid reel request (either form) into what is stored and what must be produced. */
export function planReelTask(body: ReelCreateBody): ReelRequest & PlanFacts {
  const model = body.model;
  const rules: ReelModelRules = REEL_MODEL_RULES[model];
  assertExclusive(body, 'size', 'aspect_ratio');
  const duration = planDuration(body, rules.durations, rules.durations[0]!, ` for ${model}`);
  const refs = referenceField(body);
  if (refs.urls.length > rules.maxImages) {
    throw invalidField(
      refs.field,
      `${refs.field} allows at most ${rules.maxImages} ${rules.maxImages === 1 ? 'item' : 'items'} for ${model} (Form ${rules.form}) (got ${refs.urls.length})`,
    );
  }
  const aspect = body.aspect_ratio ?? (body.size === '1280x720' ? '16:9' : '9:16');
  return {
    family: 'reel',
    form: rules.form,
    model,
    params: {
      prompt: body.prompt,
      size: aspect === '16:9' ? '1280x720' : '720x1280',
      aspect_ratio: aspect,
      duration,
      ...referenceParams(refs),
    },
    // D19: 720p in the orientation asked, the requested length; reel has no audio field, so no audio.
    output: videoOutput('720p', aspect, duration, false),
    media: mediaRefs({ images: refsOf(refs.field, refs.urls) }),
    amount: priceTask(findModel(model)!),
  };
}
