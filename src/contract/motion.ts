import { Type, type Static } from '../typebox.js';
import { AppError, invalidField } from '../errors.js';
import { findModel, priceTask } from './catalog.js';
import { mediaRefs, type MediaRef } from './media-refs.js';
import { MOTION_PROMPT_MAX_CHARS, motionPromptProblem } from './motion-prompt.js';
import { videoOutput } from './output.js';
import { assertRange } from './rules.js';
import { IntegerLike, MediaUrl, StringEnum, toInteger, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

/** The 1.5 pro models: billed per second, audio, duration 4-12 or -1, resolution from the name. */
export const MOTION_PRO_MODELS = ['motion_1_5_pro_480p', 'motion_1_5_pro_720p', 'motion_1_5_pro_1080p'] as const;
/** The 2.0 tier models (D16). */
export const MOTION_TIER_MODELS = ['motion_2_0_4s_5s', 'motion_2_0_6s_10s', 'motion_2_0_11s_15s'] as const;
/** The 2.0 models of the overview list: the general 2-12 s rule. */
export const MOTION_OVERVIEW_MODELS = ['motion_2_0', 'motion_2_0_fast', 'motion_2_0_pro', 'motion_2_0_fast_pro'] as const;
export const MOTION_MODELS = [...MOTION_PRO_MODELS, ...MOTION_TIER_MODELS, ...MOTION_OVERVIEW_MODELS] as const;
export const MOTION_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] as const;
export const MOTION_IMAGE_ROLES = ['first_frame', 'last_frame', 'reference_image'] as const;
/** `default` (standard price) or `flex` (half price, slower); the field name is ours (the interface shows none: G29). */
export const MOTION_SERVICE_TIERS = ['default', 'flex'] as const;
export const MOTION_MAX_REFERENCE_IMAGES = 4;
/** `duration: -1` on a 1.5 pro model: the automatic choice, always this many seconds (deterministic). */
export const MOTION_AUTO_DURATION = 5;
/** Price factor of the `flex` tier (docs/reference/api/motion.md#request: half the standard price). */
export const MOTION_FLEX_PRICE_FACTOR = 0.5;

export interface MotionDurationRule {
  min: number;
  max: number;
  default: number;
  /** Whether -1 (automatic) is accepted. */
  auto: boolean;
}

/** Durations a model accepts (docs/reference/api/motion.md#models, D16). */
export function motionDurationRule(model: string): MotionDurationRule {
  switch (model) {
    case 'motion_2_0_4s_5s':
      return { min: 1, max: 5, default: 5, auto: false };
    case 'motion_2_0_6s_10s':
      return { min: 6, max: 10, default: 10, auto: false };
    case 'motion_2_0_11s_15s':
      return { min: 11, max: 15, default: 15, auto: false };
    default:
      return isMotionPro(model) ? { min: 4, max: 12, default: 5, auto: true } : { min: 2, max: 12, default: 5, auto: false };
  }
}

export const isMotionPro = (model: string): boolean => (MOTION_PRO_MODELS as readonly string[]).includes(model);

/** Output resolution: the 1.5 pro name's suffix; every 2.0 model renders 720p. */
export function motionResolution(model: string): string {
  return isMotionPro(model) ? model.slice(model.lastIndexOf('_') + 1) : '720p';
}

const MotionContentItem = Type.Object(
  {
    type: StringEnum(['text', 'image_url'] as const, { description: 'text or image_url' }),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MOTION_PROMPT_MAX_CHARS,
        description: 'Prompt (text objects): Chinese up to 500 characters, English up to 1000 words, 20,000 characters in all',
      }),
    ),
    image_url: Type.Optional(Type.Object({ url: MediaUrl('image URL') }, { additionalProperties: true })),
    role: Type.Optional(StringEnum(MOTION_IMAGE_ROLES, { description: 'Image role; omitted = first_frame' })),
  },
  { additionalProperties: true },
);

export const MotionCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: StringEnum(MOTION_MODELS, { description: 'Motion model' }),
    content: Type.Array(MotionContentItem, { minItems: 1, maxItems: 16, description: 'One text object and/or image objects' }),
    ratio: Type.Optional(
      StringEnum(MOTION_RATIOS, { description: 'Aspect ratio; default 16:9 for text-to-video (adaptive for 1.5 pro), adaptive with images' }),
    ),
    duration: Type.Optional(IntegerLike('seconds: 2-12 (1.5 pro: 4-12 or -1; 2.0 tiers: their tier), an integer or a string of digits')),
    generate_audio: Type.Optional(Type.Boolean({ description: 'Audio track; only the 1.5 pro models (default true there)' })),
    service_tier: Type.Optional(StringEnum(MOTION_SERVICE_TIERS, { description: 'default or flex (half price, slower)' })),
  },
  { additionalProperties: true },
);

export type MotionCreateBody = Static<typeof MotionCreateBody>;

/** A content object as a task stores it: a text with its text, an image with its role (omitted: first_frame). */
const MotionParamsItem = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('image_url'),
      image_url: Type.Object({ url: MediaUrl('image URL') }, { additionalProperties: false }),
      role: StringEnum(MOTION_IMAGE_ROLES),
    },
    { additionalProperties: false },
  ),
]);

/**
 * What a motion task stores as its parameters (`planMotionTask`) and its provider is given (G405):
 * the content objects, each with only its type's fields, and every option with its default; the
 * duration as asked (-1: automatic on a 1.5 pro model), the resolution the model's.
 */
export const MotionParams = Type.Object(
  {
    content: Type.Array(MotionParamsItem),
    ratio: StringEnum(MOTION_RATIOS),
    duration: Type.Integer({ description: 'seconds as asked; -1: automatic (1.5 pro)' }),
    generate_audio: Type.Boolean(),
    service_tier: StringEnum(MOTION_SERVICE_TIERS),
    resolution: Type.String({ description: "the model's: 480p, 720p or 1080p" }),
  },
  { additionalProperties: false },
);

export type MotionParams = Static<typeof MotionParams>;

/** A motion request as a task holds it. */
export interface MotionRequest {
  family: 'motion';
  form: null;
  params: MotionParams;
}

interface Indexed {
  index: number;
  url: string;
}

/** The content array sorted by kind; each object checked for the field its type needs. */
function splitContent(content: MotionCreateBody['content']) {
  const texts: Array<{ index: number; text: string }> = [];
  const first: Indexed[] = [];
  const last: Indexed[] = [];
  const refs: Indexed[] = [];
  content.forEach((item, index) => {
    if (item.type === 'text') {
      if (item.text === undefined) throw invalidField(`content[${index}].text`, `content[${index}].text is required in a text object`);
      texts.push({ index, text: item.text });
      return;
    }
    if (item.image_url === undefined) throw invalidField(`content[${index}].image_url`, `content[${index}].image_url is required in an image_url object`);
    const role = item.role ?? 'first_frame';
    (role === 'first_frame' ? first : role === 'last_frame' ? last : refs).push({ index, url: item.image_url.url });
  });
  return { texts, first, last, refs };
}

const at = (i: number): string => `content[${i}]`;

/** Scenario rules: first frame, first+last frame, or 1-4 reference images; never mixed. */
function assertScenario(first: Indexed[], last: Indexed[], refs: Indexed[]): void {
  const frames = [...first, ...last].sort((a, b) => a.index - b.index);
  if (refs.length > 0 && frames.length > 0) {
    throw new AppError(
      'exclusive_fields',
      `${at(frames[0]!.index)} (a ${first.includes(frames[0]!) ? 'first_frame' : 'last_frame'} image) and ` +
        `${at(refs[0]!.index)} (a reference_image) cannot be combined: first-frame, first-and-last-frame and reference-image scenarios cannot be mixed`,
      { param: `${at(frames[0]!.index)}.role,${at(refs[0]!.index)}.role` },
    );
  }
  if (first.length > 1)
    throw invalidField(`${at(first[1]!.index)}.role`, `content may hold at most one first_frame image (role first_frame or omitted); got ${first.length}`);
  if (last.length > 1) throw invalidField(`${at(last[1]!.index)}.role`, `content may hold at most one last_frame image; got ${last.length}`);
  if (last.length === 1 && first.length === 0)
    throw invalidField(`${at(last[0]!.index)}.role`, `a last_frame image requires a first_frame image (role first_frame or omitted)`);
  if (refs.length > MOTION_MAX_REFERENCE_IMAGES) {
    throw invalidField(
      `${at(refs[MOTION_MAX_REFERENCE_IMAGES]!.index)}`,
      `content may hold 1 to ${MOTION_MAX_REFERENCE_IMAGES} reference_image images; got ${refs.length}`,
    );
  }
}

/** The requested duration checked against the model's rule, and the seconds to produce. */
function resolveDuration(model: string, value: number | string | undefined): { requested: number; seconds: number } {
  const rule = motionDurationRule(model);
  const requested = toInteger(value) ?? rule.default;
  if (rule.auto && requested === -1) return { requested, seconds: MOTION_AUTO_DURATION };
  assertRange('duration', requested, rule.min, rule.max, ` for ${model}${rule.auto ? ', or -1 for automatic' : ''}`);
  return { requested, seconds: requested };
}

/** Turns a schema-valid motion request into what is stored and what must be produced. */
export function planMotionTask(body: MotionCreateBody): MotionRequest & PlanFacts {
  const { texts, first, last, refs } = splitContent(body.content);
  const hasImages = first.length + last.length + refs.length > 0;
  if (texts.length > 1) throw invalidField(at(texts[1]!.index), `content may hold at most one text object; got ${texts.length}`);
  // content has at least one item, so without images there is a text object: text-to-video needs
  // one; image-to-video may omit it.
  const text = texts[0];
  if (text) {
    if (text.text.trim() === '') throw invalidField(`${at(text.index)}.text`, `${at(text.index)}.text must not be blank`);
    const problem = motionPromptProblem(text.text);
    if (problem) throw invalidField(`${at(text.index)}.text`, `${at(text.index)}.text ${problem}`);
  }
  assertScenario(first, last, refs);

  const pro = isMotionPro(body.model);
  if (body.generate_audio === true && !pro) {
    throw invalidField('generate_audio', `generate_audio is supported only by ${MOTION_PRO_MODELS.join(', ')} (got true for ${body.model})`);
  }
  const { requested, seconds } = resolveDuration(body.model, body.duration);
  const audio = pro && (body.generate_audio ?? true);
  const ratio = body.ratio ?? (hasImages || pro ? 'adaptive' : '16:9');
  const tier = body.service_tier ?? 'default';
  const ref = (x: Indexed): MediaRef => ({ url: x.url, field: `${at(x.index)}.image_url.url` });
  const model = findModel(body.model)!;
  const price = priceTask(model, seconds);
  return {
    family: 'motion',
    form: null,
    model: body.model,
    params: {
      // every object was checked for its type's field (splitContent)
      content: body.content.map((item) =>
        item.type === 'text'
          ? { type: 'text', text: item.text! }
          : { type: 'image_url', image_url: { url: item.image_url!.url }, role: item.role ?? 'first_frame' },
      ),
      ratio,
      duration: requested,
      generate_audio: audio,
      service_tier: tier,
      resolution: motionResolution(body.model),
    },
    output: videoOutput(motionResolution(body.model), ratio, seconds, audio),
    media: mediaRefs({
      ...(first[0] && { firstFrame: ref(first[0]) }),
      ...(last[0] && { lastFrame: ref(last[0]) }),
      images: refs.map(ref),
    }),
    amount: tier === 'flex' ? price * MOTION_FLEX_PRICE_FACTOR : price,
  };
}
