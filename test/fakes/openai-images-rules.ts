/**
 * What the real Images API refuses, as the fake (openai-images.ts) checks it: per model, the sizes
 * (gpt-image-2: sides multiples of 16, long side <= 3840, ratio <= 3:1, 655,360-8,294,400 pixels;
 * gpt-image-1/-1-mini/-1.5: 1024x1024, 1536x1024, 1024x1536 or auto; dall-e-3: 1024x1024,
 * 1792x1024, 1024x1792; dall-e-2: 256/512/1024 squares), `response_format` (dall-e only; GPT image
 * models answer `Unknown parameter`), `output_format` (GPT image models only), `n` (dall-e-3: 1),
 * edits (not dall-e-3; dall-e-2: one image; GPT image models: up to 16). From the `openai` package's
 * `resources/images.d.ts` and the published API reference. Written independently of src.
 */

export interface ApiError {
  status: number;
  error: { message: string; type: string; param: string | null; code: string | null };
}

const invalid = (param: string | null, message: string, code: string | null = 'invalid_value'): ApiError => ({
  status: 400,
  error: { message, type: 'invalid_request_error', param, code },
});

const GPT = /^(gpt-image-|chatgpt-image)/;
const FIXED: Record<string, string[]> = {
  'gpt-image-1': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
  'gpt-image-1-mini': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
  'gpt-image-1.5': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
  'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'],
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
};
export const FAKE_MODELS = ['gpt-image-2', ...Object.keys(FIXED)];

function gptImage2Size(size: string): string | undefined {
  if (size === 'auto') return undefined;
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) return `Invalid value: '${size}'. Size must be WIDTHxHEIGHT or auto.`;
  const [w, h] = [Number(m[1]), Number(m[2])];
  if (w % 16 || h % 16) return `Invalid size '${size}'. Width and height must both be divisible by 16.`;
  if (Math.max(w, h) > 3840) return `Invalid size '${size}'. The maximum edge length is 3840 pixels.`;
  if (Math.max(w, h) / Math.min(w, h) > 3) return `Invalid size '${size}'. The aspect ratio must be between 1:3 and 3:1.`;
  if (w * h < 655_360 || w * h > 8_294_400) return `Invalid size '${size}'. The total number of pixels must be between 655360 and 8294400.`;
  return undefined;
}

export interface ImagesRequest {
  edits: boolean;
  fields: Record<string, string>;
  /** Files of `image[]` (or `image`). */
  images: Array<{ field: string; type: string; bytes: number }>;
}

/** The API's refusal of the request, or undefined when it would make it. */
export function validate(req: ImagesRequest): ApiError | undefined {
  const f = req.fields;
  const model = f.model ?? (req.edits ? 'gpt-image-1.5' : 'dall-e-2');
  if (!FAKE_MODELS.includes(model))
    return {
      status: 404,
      error: {
        message: `The model '${model}' does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    };
  if (!f.prompt) return invalid('prompt', "Missing required parameter: 'prompt'.", 'missing_required_parameter');
  const gpt = GPT.test(model);
  if (gpt && f.response_format !== undefined) return invalid('response_format', "Unknown parameter: 'response_format'.", 'unknown_parameter');
  if (!gpt && f.output_format !== undefined)
    return invalid('output_format', `Unknown parameter: 'output_format'. It is supported for GPT image models only.`, 'unknown_parameter');
  if (f.response_format !== undefined && !['url', 'b64_json'].includes(f.response_format))
    return invalid('response_format', `Invalid value: '${f.response_format}'. Supported values are: 'url' and 'b64_json'.`);
  if (f.output_format !== undefined && !['png', 'jpeg', 'webp'].includes(f.output_format))
    return invalid('output_format', `Invalid value: '${f.output_format}'. Supported values are: 'png', 'jpeg', and 'webp'.`);
  const n = f.n === undefined ? 1 : Number(f.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return invalid('n', `Invalid value: ${f.n}. n must be between 1 and 10.`);
  if (model === 'dall-e-3' && n !== 1) return invalid('n', 'You must provide n=1 for this model.');
  if (f.size !== undefined) {
    const problem =
      model === 'gpt-image-2'
        ? gptImage2Size(f.size)
        : FIXED[model]!.includes(f.size)
          ? undefined
          : `Invalid value: '${f.size}'. Supported values are: ${FIXED[model]!.map((s) => `'${s}'`).join(', ')}.`;
    if (problem) return invalid('size', problem);
  }
  if (req.edits) {
    if (model === 'dall-e-3') return invalid('model', "Invalid value: 'dall-e-3'. Value must be 'dall-e-2' or a GPT image model.");
    if (req.images.length === 0) return invalid('image', "Missing required parameter: 'image'.", 'missing_required_parameter');
    const max = model === 'dall-e-2' ? 1 : 16;
    if (req.images.length > max) return invalid('image', `Too many images: ${req.images.length}. At most ${max} may be provided for ${model}.`);
    const bad = req.images.findIndex((i) => !['image/png', 'image/jpeg', 'image/webp'].includes(i.type) || (model === 'dall-e-2' && i.type !== 'image/png'));
    if (bad >= 0) return invalid(`image[${bad}]`, `Invalid file 'image[${bad}]': unsupported mimetype ('${req.images[bad]!.type}').`, 'invalid_image_format');
  }
  return undefined;
}

/** The pixel size an accepted request makes. */
export function madeSize(fields: Record<string, string>): { width: number; height: number } {
  const m = /^(\d+)x(\d+)$/.exec(fields.size ?? '');
  return m ? { width: Number(m[1]), height: Number(m[2]) } : { width: 1024, height: 1024 };
}
