/**
 * What each OpenAI image model takes (G130): its sizes, whether it takes reference
 * images (and how many), `output_format`, `response_format` and the `quality` values. The model is
 * the route's upstream name; a name not listed here is treated as a GPT image model of the newest
 * kind (free `WxH`), the family OpenAI adds models to.
 */

export type ImageModelKind = 'gpt-image-2' | 'gpt-image-1' | 'dall-e-3' | 'dall-e-2';

export interface ImageModelRules {
  kind: ImageModelKind;
  /** Fixed sizes (`WxH`); undefined: free `WxH` within {@link FREE_SIZE}. */
  sizes?: readonly (readonly [number, number])[];
  /** Reference images `/images/edits` takes (0: no edits). */
  maxImages: number;
  /** GPT image models: always base64, `response_format` refused; `output_format` taken. */
  gptImage: boolean;
  quality: readonly string[];
}

/** gpt-image-2's free sizes: sides multiples of 16, long side <= 3840, ratio <= 3:1, pixels in range. */
export const FREE_SIZE = { step: 16, maxEdge: 3840, maxRatio: 3, minPixels: 655_360, maxPixels: 8_294_400 } as const;

const GPT_QUALITY = ['low', 'medium', 'high', 'auto'] as const;

export const MODEL_RULES: Record<ImageModelKind, ImageModelRules> = {
  'gpt-image-2': { kind: 'gpt-image-2', maxImages: 16, gptImage: true, quality: GPT_QUALITY },
  'gpt-image-1': {
    kind: 'gpt-image-1',
    sizes: [
      [1024, 1024],
      [1536, 1024],
      [1024, 1536],
    ],
    maxImages: 16,
    gptImage: true,
    quality: GPT_QUALITY,
  },
  'dall-e-3': {
    kind: 'dall-e-3',
    sizes: [
      [1024, 1024],
      [1792, 1024],
      [1024, 1792],
    ],
    maxImages: 0,
    gptImage: false,
    quality: ['standard', 'hd'],
  },
  'dall-e-2': {
    kind: 'dall-e-2',
    sizes: [
      [256, 256],
      [512, 512],
      [1024, 1024],
    ],
    maxImages: 1,
    gptImage: false,
    quality: ['standard'],
  },
};

/** The rules of an upstream model name (`gpt-image-1`, `gpt-image-1-mini`, `gpt-image-1.5` and `chatgpt-image-latest` share the fixed sizes). */
export function rulesOf(upstreamModel: string): ImageModelRules {
  const m = upstreamModel.toLowerCase();
  if (m.startsWith('dall-e-3')) return MODEL_RULES['dall-e-3'];
  if (m.startsWith('dall-e-2')) return MODEL_RULES['dall-e-2'];
  if (/^gpt-image-1(\b|[.-])/.test(m) || m.startsWith('chatgpt-image')) return MODEL_RULES['gpt-image-1'];
  return MODEL_RULES['gpt-image-2'];
}
