import { Type, type Static } from '../typebox.js';
import { findModel, priceTask } from './catalog.js';
import { IMAGE_LONG_SIDE, sizeForAspect, type ImageResolution, type OutputSpec } from './output.js';
import { mediaRefs, refsOf } from './media-refs.js';
import { MediaUrl, StringEnum, CallbackUrlField } from './schema-helpers.js';
import type { PlanFacts } from './task-request.js';

export const PIC_MODELS = ['pic', 'pic-pro', 'pic-pro-stable', 'pic-2-stable', 'pic-2'] as const;
export const PIC_RESOLUTIONS = ['1k', '2k', '4k'] as const;
export const PIC_SIZES = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '5:4', '4:5', '21:9'] as const;
/** Models for which `resolution` takes effect; the others always render at 1k (D19). */
export const PIC_RESOLUTION_MODELS: readonly string[] = ['pic-2', 'pic-pro'];
export const PIC_MAX_IMAGE_URLS = 6;

const ImageUrls = Type.Array(MediaUrl('reference image URL'), { maxItems: PIC_MAX_IMAGE_URLS, description: 'Reference images, at most 6' });

export const PicCreateBody = Type.Object(
  {
    callback_url: CallbackUrlField(),
    model: StringEnum(PIC_MODELS, { description: 'Image model' }),
    prompt: Type.String({ minLength: 1, maxLength: 20_000, description: 'Text describing the image' }),
    resolution: Type.Optional(StringEnum(PIC_RESOLUTIONS, { description: 'Long side 1024/2048/4096 px; effective only with pic-2 and pic-pro' })),
    size: Type.Optional(StringEnum(PIC_SIZES, { description: 'Aspect ratio; default 1:1' })),
    image_urls: Type.Optional(ImageUrls),
  },
  { additionalProperties: true },
);

export type PicCreateBody = Static<typeof PicCreateBody>;

/**
 * What a pic task stores as its parameters (`planPicTask`) and its provider is given
 * (`ProviderJob.params`, G405): the request's fields as sent, `image_urls` always a list.
 */
export const PicParams = Type.Object(
  {
    prompt: PicCreateBody.properties.prompt,
    resolution: PicCreateBody.properties.resolution,
    size: PicCreateBody.properties.size,
    image_urls: ImageUrls,
  },
  { additionalProperties: false },
);

export type PicParams = Static<typeof PicParams>;

/** A pic request as a task holds it: the family, no form, its parameters. */
export interface PicRequest {
  family: 'pic';
  form: null;
  params: PicParams;
}

/** Turns a schema-valid image request into what is stored and what must be produced. */
export function planPicTask(body: PicCreateBody): PicRequest & PlanFacts {
  const resolution: ImageResolution = PIC_RESOLUTION_MODELS.includes(body.model) ? (body.resolution ?? '1k') : '1k';
  const size = body.size ?? '1:1';
  const output: OutputSpec = { kind: 'image', format: 'png', ...sizeForAspect(size, IMAGE_LONG_SIDE[resolution]) };
  const model = findModel(body.model)!;
  return {
    family: 'pic',
    form: null,
    model: body.model,
    params: {
      prompt: body.prompt,
      ...(body.resolution !== undefined && { resolution: body.resolution }),
      ...(body.size !== undefined && { size: body.size }),
      image_urls: body.image_urls ?? [],
    },
    output,
    media: mediaRefs({ images: refsOf('image_urls', body.image_urls) }),
    amount: priceTask(model),
  };
}
