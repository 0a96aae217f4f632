/**
 * The models of the fake fal queue and how each validates its input when it runs (FastAPI /
 * pydantic 422 bodies: `{detail: [{loc: ["body", <input>], msg, type}]}`), and what it makes.
 * Unknown inputs are ignored, as pydantic models do.
 */
export interface FalValidationError {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface FakeFalModel {
  kind: 'image' | 'video';
  validate(input: Record<string, unknown>): FalValidationError[];
  /** Pixel size (and seconds for a video) of what it makes. */
  made(input: Record<string, unknown>): { width: number; height: number; seconds?: number };
}

const IMAGE_SIZES: Record<string, [number, number]> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};

const missing = (input: Record<string, unknown>, name: string): FalValidationError[] =>
  typeof input[name] === 'string' && input[name] !== '' ? [] : [{ loc: ['body', name], msg: 'field required', type: 'value_error.missing' }];

const oneOf = (input: Record<string, unknown>, name: string, allowed: readonly string[]): FalValidationError[] => {
  const v = input[name];
  if (v === undefined || (typeof v === 'string' && allowed.includes(v))) return [];
  return [
    { loc: ['body', name], msg: `value is not a valid enumeration member; permitted: ${allowed.map((a) => `'${a}'`).join(', ')}`, type: 'type_error.enum' },
  ];
};

const intIn = (input: Record<string, unknown>, name: string, min: number, max: number): FalValidationError[] => {
  const v = input[name];
  if (v === undefined) return [];
  if (typeof v !== 'number' || !Number.isInteger(v)) return [{ loc: ['body', name], msg: 'value is not a valid integer', type: 'type_error.integer' }];
  if (v < min) return [{ loc: ['body', name], msg: `ensure this value is greater than or equal to ${min}`, type: 'value_error.number.not_ge' }];
  if (v > max) return [{ loc: ['body', name], msg: `ensure this value is less than or equal to ${max}`, type: 'value_error.number.not_le' }];
  return [];
};

const VIDEO_RATIOS = ['16:9', '9:16', '1:1'] as const;
const videoSize = (ratio: unknown): { width: number; height: number } =>
  ratio === '9:16' ? { width: 180, height: 320 } : ratio === '1:1' ? { width: 240, height: 240 } : { width: 320, height: 180 };

const kling = (needsImage: boolean): FakeFalModel => ({
  kind: 'video',
  validate: (input) => [
    ...missing(input, 'prompt'),
    ...(needsImage ? missing(input, 'image_url') : []),
    ...oneOf(input, 'duration', ['5', '10']),
    ...oneOf(input, 'aspect_ratio', VIDEO_RATIOS),
  ],
  // small videos, so tests stay fast: the engine probes what was made
  made: (input) => ({ ...videoSize(input.aspect_ratio), seconds: 1 }),
});

const veo3 = (needsImage: boolean): FakeFalModel => ({
  kind: 'video',
  validate: (input) => [
    ...missing(input, 'prompt'),
    ...(needsImage ? missing(input, 'image_url') : []),
    ...oneOf(input, 'duration', ['8s']),
    ...oneOf(input, 'aspect_ratio', ['16:9', '9:16']),
    ...oneOf(input, 'resolution', ['720p', '1080p']),
  ],
  made: (input) => ({ ...videoSize(input.aspect_ratio), seconds: 1 }),
});

export const FAKE_FAL_MODELS: Record<string, FakeFalModel> = {
  'fal-ai/veo3': veo3(false),
  'fal-ai/veo3/image-to-video': veo3(true),
  'fal-ai/flux/dev': {
    kind: 'image',
    validate: (input) => [
      ...missing(input, 'prompt'),
      ...(typeof input.image_size === 'object' ? [] : oneOf(input, 'image_size', Object.keys(IMAGE_SIZES))),
      ...intIn(input, 'num_images', 1, 4),
      ...intIn(input, 'seed', 0, 2 ** 32),
    ],
    made: (input) => {
      const s = input.image_size;
      if (s && typeof s === 'object') return s as { width: number; height: number };
      const [width, height] = IMAGE_SIZES[(s as string | undefined) ?? 'landscape_4_3']!;
      return { width, height };
    },
  },
  'fal-ai/kling-video/v2/master/text-to-video': kling(false),
  'fal-ai/kling-video/v2/master/image-to-video': kling(true),
};
