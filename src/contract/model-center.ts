import { Type, type Static } from '../typebox.js';
import { AppError, invalidField } from '../errors.js';
import { findModel, priceTask } from './catalog.js';
import { mediaRefs, refsOf, type MediaRefs } from './media-refs.js';
import { findModelCenterModel, MODEL_CENTER_MODELS, suggestModelCenterModel, type ModelCenterModel } from './model-center-catalog.js';
import { planSdTask, SD_ASPECT_RATIOS, SD_MODELS, sdThenSchema } from './model-center-sd.js';
import { IMAGE_LONG_SIDE, sizeForAspect, videoOutput, type ImageResolution, type OutputSpec } from './output.js';
import { assertRange } from './rules.js';
import { IntegerLike, MediaUrl, toInteger, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

const urlList = (what: string) => Type.Optional(Type.Array(MediaUrl(`${what} URL`), { description: `${what} (http(s) URLs)` }));

/**
 * `POST /v2/model-center/tasks` body. The base part types the fields every model shares; the three
 * fully specified sd models add their table (enums, counts) with `if model = id then ...`. Every
 * other field is kept and passed on to the provider (D11).
 */
export const ModelCenterCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'Model ID (not a display name)' }),
    prompt: Type.String({ minLength: 1, description: 'Text describing the result' }),
    image_urls: urlList('reference images'),
    reference_images: urlList('reference images'),
    reference_videos: urlList('reference videos'),
    reference_audios: urlList('reference audios'),
    first_image: urlList('first frame image'),
    last_image: urlList('last frame image'),
    duration: Type.Optional(IntegerLike('an integer number of seconds, or a string of digits')),
    resolution: Type.Optional(Type.String({ description: 'video: 480p, 720p, 1080p, 4K; image: 1k, 2k, 4k' })),
    aspect_ratio: Type.Optional(Type.String({ description: 'e.g. 16:9' })),
    generate_audio: Type.Optional(Type.Boolean({ description: 'video: add an audio track' })),
  },
  {
    additionalProperties: true,
    allOf: Object.keys(SD_MODELS).map((id) => ({
      if: { properties: { model: { const: id } }, required: ['model'] },
      then: sdThenSchema(id),
    })),
  },
);

export type ModelCenterCreateBody = Static<typeof ModelCenterCreateBody>;

const { model: _modelField, callback_url: _callbackField, ...storedFields } = ModelCenterCreateBody.properties;

/**
 * What a Model Center task stores as its parameters (`planModelCenterTask`) and its provider is
 * given (G405): the request without `model`, every other field kept (D11); an sd model's table
 * fields with their defaults (`SdParams`), another model's fields as sent.
 */
export const ModelCenterParams = Type.Object(storedFields, { additionalProperties: true });

/** The fields every model shares, typed; any other field as sent (D11). */
export type ModelCenterParams = Static<typeof ModelCenterParams> & { [field: string]: unknown };

/** A Model Center request as a task holds it. */
export interface ModelCenterRequest {
  family: 'model-center';
  form: null;
  params: ModelCenterParams;
}

/**
 * The published model for a Model ID; anything else is a 400 `unknown_model`. A display name or a
 * near spelling of an id gets a message naming the Model ID to use (D17).
 */
export function resolveModelCenterModel(model: string): ModelCenterModel {
  const found = findModelCenterModel(model);
  if (found) return found;
  const hint = suggestModelCenterModel(model);
  const normalise = (s: string): string =>
    s
      .toLowerCase()
      .replace(/[\s_-]+/g, ' ')
      .trim();
  const message = !hint
    ? `model "${model}" is not a published Model ID; use one of: ${MODEL_CENTER_MODELS.map((m) => m.id).join(', ')}`
    : hint.displayNames.some((d) => normalise(d) === normalise(model))
      ? `model "${model}" is a display name, not a Model ID; send model "${hint.id}"`
      : `model "${model}" is not a Model ID; did you mean "${hint.id}"?`;
  throw new AppError('unknown_model', message, { param: 'model' });
}

/** Video resolutions a video model other than the three sd models may ask for (case-insensitive). */
export const GENERIC_VIDEO_RESOLUTIONS = ['480p', '720p', '1080p', '4K'] as const;
/** Duration range (seconds) accepted for video models other than the three sd models. */
export const GENERIC_VIDEO_DURATION = { min: 1, max: 60, default: 5 } as const;

const list = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : []);

/** Caller media of a model whose parameters are not shown, by the common field names. */
function genericMedia(body: Record<string, unknown>): MediaRefs {
  const first = list(body.first_image);
  const last = list(body.last_image);
  return mediaRefs({
    ...(first[0] !== undefined && { firstFrame: { url: first[0], field: 'first_image[0]' } }),
    ...(last[0] !== undefined && { lastFrame: { url: last[0], field: 'last_image[0]' } }),
    images: [...refsOf('image_urls', list(body.image_urls)), ...refsOf('reference_images', list(body.reference_images))],
    videos: refsOf('reference_videos', list(body.reference_videos)),
    audios: refsOf('reference_audios', list(body.reference_audios)),
  });
}

const RATIO = /^([1-9][0-9]?):([1-9][0-9]?)$/;
const PIXELS = /^([0-9]{2,4})[x*]([0-9]{2,4})$/i;

/** `W:H` with a ratio from 1:4 to 4:1, as [w, h]; undefined when `text` is no such ratio. */
function ratioOf(text: string): [number, number] | undefined {
  const m = RATIO.exec(text);
  if (!m) return undefined;
  const [w, h] = [Number(m[1]), Number(m[2])];
  return w / h >= 0.25 && w / h <= 4 ? [w, h] : undefined;
}

/** An optional string field of an imagegen request, trimmed; another type is a 400 naming it. */
function imagegenField(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidField(field, `${field} must be a string (got ${typeof v})`);
  return v.trim();
}

const SIZE_RULE = 'WxH pixels, each 64 to 4096 (such as 1536x1024), or a ratio W:H from 1:4 to 4:1 (such as 16:9)';

/**
 * Pixel size of an imagegen result from the optional `size`, `aspect_ratio` and `resolution`
 * fields: `size` as `WxH` pixels (64-4096 each) wins; else the ratio of `aspect_ratio`, else of `size`
 * (`W:H`, 1:4 to 4:1) at the long side of `resolution` (1k/2k/4k, default 1k); else 1024x1024. A
 * value of none of these forms is a 400 naming its field (G34): the gateway checks what it must
 * produce, as for the video models, instead of making a square the caller did not ask for.
 */
export function imagegenOutput(body: Record<string, unknown>): OutputSpec {
  const size = imagegenField(body, 'size');
  const resolution = imagegenField(body, 'resolution')?.toLowerCase();
  const aspect = imagegenField(body, 'aspect_ratio');
  if (resolution !== undefined && !(resolution in IMAGE_LONG_SIDE)) {
    throw invalidField('resolution', `resolution must be one of: 1k, 2k, 4k (got "${body.resolution as string}")`);
  }
  const aspectRatio = aspect === undefined ? undefined : ratioOf(aspect);
  if (aspect !== undefined && !aspectRatio)
    throw invalidField('aspect_ratio', `aspect_ratio must be a ratio W:H from 1:4 to 4:1, such as 16:9 (got "${aspect}")`);
  let sizeRatio: [number, number] | undefined;
  if (size !== undefined) {
    const pixels = PIXELS.exec(size);
    if (pixels) {
      const [w, h] = [Number(pixels[1]), Number(pixels[2])];
      if (w < 64 || h < 64 || w > 4096 || h > 4096) throw invalidField('size', `size must be ${SIZE_RULE} (got "${size}")`);
      return { kind: 'image', format: 'png', width: w, height: h };
    }
    sizeRatio = ratioOf(size);
    if (!sizeRatio) throw invalidField('size', `size must be ${SIZE_RULE} (got "${size}")`);
  }
  const longSide = resolution === undefined ? 1024 : IMAGE_LONG_SIDE[resolution as ImageResolution];
  const ratio = aspectRatio ?? sizeRatio;
  return { kind: 'image', format: 'png', ...sizeForAspect(ratio ? `${ratio[0]}:${ratio[1]}` : '1:1', longSide) };
}

/**
 * Output of a video model whose parameters are not shown: `resolution` (480p/720p/1080p/4K,
 * default 720p), `aspect_ratio` (the sd ratios, default 16:9), `duration` (1-60, default 5) and
 * `generate_audio` (default false), each checked only when sent.
 */
export function genericVideoOutput(id: string, body: Record<string, unknown>): OutputSpec {
  const resolution = (body.resolution as string | undefined) ?? '720p';
  if (!GENERIC_VIDEO_RESOLUTIONS.some((r) => r.toLowerCase() === resolution.toLowerCase())) {
    throw invalidField('resolution', `resolution must be one of: ${GENERIC_VIDEO_RESOLUTIONS.join(', ')} (got "${resolution}")`);
  }
  const aspect = (body.aspect_ratio as string | undefined) ?? '16:9';
  if (!(SD_ASPECT_RATIOS as readonly string[]).includes(aspect)) {
    throw invalidField('aspect_ratio', `aspect_ratio must be one of: ${SD_ASPECT_RATIOS.join(', ')} (got "${aspect}")`);
  }
  const duration = toInteger(body.duration as number | string | undefined) ?? GENERIC_VIDEO_DURATION.default;
  assertRange('duration', duration, GENERIC_VIDEO_DURATION.min, GENERIC_VIDEO_DURATION.max, ` for ${id}`);
  return videoOutput(resolution, aspect, duration, (body.generate_audio as boolean | undefined) ?? false);
}

/**
 * Turns a schema-valid Model Center request into a SubmitPlan. The three sd models are fully
 * validated (model-center-sd.ts); every other model takes `prompt` and the common media fields and
 * gets all its other fields passed on unchanged.
 */
export function planModelCenterTask(body: ModelCenterCreateBody): ModelCenterRequest & PlanFacts {
  const model = resolveModelCenterModel(body.model);
  const fields = body as Record<string, unknown>;
  const amount = priceTask(findModel(model.id)!);
  const base = { family: 'model-center' as const, form: null, model: model.id, amount };
  if (SD_MODELS[model.id]) return { ...base, ...planSdTask(model.id, fields) };
  const { model: _model, ...params } = body;
  const output = model.kind === 'image' ? imagegenOutput(fields) : genericVideoOutput(model.id, fields);
  return { ...base, params, output, media: genericMedia(fields) };
}
