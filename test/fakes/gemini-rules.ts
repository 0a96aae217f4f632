/**
 * The Gemini API's own rules, as the fake (gemini.ts) enforces them: which models exist, what each
 * image model and Veo model takes, the sizes images are made at, and the google.rpc Status error
 * bodies it answers with. Written from the API reference (ai.google.dev: image generation,
 * Veo) and the official client's wire mapping (googleapis/js-genai `generateVideosParametersToMldev`:
 * `instances[0].{prompt,image,lastFrame,referenceImages}`, `parameters.{aspectRatio,durationSeconds,
 * resolution,negativePrompt,personGeneration}`; `generateAudio` is not part of the Gemini API).
 */

export interface RpcError {
  status: number;
  body: { error: { code: number; message: string; status: string; details?: unknown[] } };
}

export const rpcError = (status: number, rpcStatus: string, message: string, details?: unknown[]): RpcError => ({
  status,
  body: { error: { code: status, message, status: rpcStatus, ...(details && { details }) } },
});

export const badRequest = (message: string, field?: string): RpcError =>
  rpcError(
    400,
    'INVALID_ARGUMENT',
    message,
    field ? [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: message }] }] : undefined,
  );

export const API_KEY_INVALID = rpcError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
  {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'API_KEY_INVALID',
    domain: 'googleapis.com',
    metadata: { service: 'generativelanguage.googleapis.com' },
  },
]);
export const UNREGISTERED = rpcError(
  403,
  'PERMISSION_DENIED',
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
);

export const quotaExceeded = (retryDelay: string): RpcError =>
  rpcError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_requests_per_model', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel' }],
    },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
  ]);
export const INTERNAL = rpcError(
  500,
  'INTERNAL',
  'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
);
export const LOCATION = rpcError(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.');

export const IMAGE_MODELS: Record<string, { imageSize: boolean; maxImages: number }> = {
  'gemini-2.5-flash-image': { imageSize: false, maxImages: 3 },
  'gemini-3-pro-image-preview': { imageSize: true, maxImages: 14 },
  'gemini-3.1-flash-image-preview': { imageSize: true, maxImages: 14 },
};

/** 1K sizes by aspect ratio (2K doubles, 4K quadruples). */
export const IMAGE_SIZES_1K: Record<string, [number, number]> = {
  '1:1': [1024, 1024],
  '2:3': [832, 1248],
  '3:2': [1248, 832],
  '3:4': [864, 1184],
  '4:3': [1184, 864],
  '4:5': [896, 1152],
  '5:4': [1152, 896],
  '9:16': [768, 1344],
  '16:9': [1344, 768],
  '21:9': [1536, 672],
};

export const VEO_MODELS: Record<string, { durations: number[]; resolutions: string[]; lastFrame: boolean; references: number }> = {
  'veo-3.1-generate-preview': { durations: [4, 6, 8], resolutions: ['720p', '1080p', '4k'], lastFrame: true, references: 3 },
  'veo-3.1-fast-generate-preview': { durations: [4, 6, 8], resolutions: ['720p', '1080p', '4k'], lastFrame: true, references: 3 },
  'veo-3.0-generate-001': { durations: [4, 6, 8], resolutions: ['720p', '1080p'], lastFrame: false, references: 0 },
  'veo-3.0-fast-generate-001': { durations: [4, 6, 8], resolutions: ['720p', '1080p'], lastFrame: false, references: 0 },
  'veo-2.0-generate-001': { durations: [5, 6, 7, 8], resolutions: ['720p'], lastFrame: true, references: 0 },
};

export const notFound = (model: string, method: string): RpcError =>
  rpcError(
    404,
    'NOT_FOUND',
    `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
  );

type Json = Record<string, any>;

/** Why generateContent refuses a body, or the image size it makes. */
export function checkImageCall(model: string, body: Json): RpcError | { width: number; height: number; prompt: string } {
  const rules = IMAGE_MODELS[model]!;
  const parts = body.contents?.[0]?.parts;
  if (!Array.isArray(parts) || parts.length === 0) return badRequest('* GenerateContentRequest.contents: contents is not specified', 'contents');
  const prompt = parts
    .filter((p: Json) => typeof p.text === 'string')
    .map((p: Json) => p.text)
    .join(' ');
  const images = parts.filter((p: Json) => p.inlineData);
  for (const p of images) {
    if (!/^image\/(png|jpeg|webp|heic|heif)$/.test(p.inlineData.mimeType ?? '') || typeof p.inlineData.data !== 'string')
      return badRequest(
        'Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
        'contents[0].parts.inline_data',
      );
  }
  if (images.length > rules.maxImages) return badRequest(`Too many input images: ${model} accepts at most ${rules.maxImages}.`, 'contents[0].parts');
  const cfg = body.generationConfig?.imageConfig ?? {};
  const aspect = cfg.aspectRatio ?? '1:1';
  if (!IMAGE_SIZES_1K[aspect])
    return badRequest(
      `* GenerateContentRequest.generation_config.image_config.aspect_ratio: Unsupported aspect ratio: ${aspect}`,
      'generation_config.image_config.aspect_ratio',
    );
  let scale = 1;
  if (cfg.imageSize !== undefined) {
    if (!rules.imageSize)
      return badRequest(
        '* GenerateContentRequest.generation_config.image_config.image_size: image_size is not supported for this model.',
        'generation_config.image_config.image_size',
      );
    const s = { '1K': 1, '2K': 2, '4K': 4 }[cfg.imageSize as string];
    if (s === undefined)
      return badRequest(
        `* GenerateContentRequest.generation_config.image_config.image_size: Unsupported image size: ${cfg.imageSize}`,
        'generation_config.image_config.image_size',
      );
    scale = s;
  }
  const mods = body.generationConfig?.responseModalities;
  if (!Array.isArray(mods) || !mods.includes('IMAGE'))
    return badRequest('Model only supports IMAGE output with response_modalities including IMAGE.', 'generation_config.response_modalities');
  const [w, h] = IMAGE_SIZES_1K[aspect]!;
  return { width: w * scale, height: h * scale, prompt };
}

/** Why predictLongRunning refuses a body, or what it makes. */
export function checkVideoCall(model: string, body: Json): RpcError | { width: number; height: number; seconds: number; prompt: string } {
  const rules = VEO_MODELS[model]!;
  const inst = body.instances;
  if (!Array.isArray(inst) || inst.length !== 1) return badRequest('instances must have exactly one element.', 'instances');
  const i = inst[0] as Json;
  if (typeof i.prompt !== 'string' || i.prompt === '') return badRequest('prompt is required.', 'instances[0].prompt');
  const p = (body.parameters ?? {}) as Json;
  for (const k of Object.keys(p)) {
    if (!['aspectRatio', 'durationSeconds', 'resolution', 'negativePrompt', 'personGeneration', 'sampleCount', 'enhancePrompt'].includes(k)) {
      return badRequest(
        `\`${k}\` isn't supported by this model. Please remove it or refer to the Gemini API documentation for supported usage.`,
        `parameters.${k}`,
      );
    }
  }
  const aspect = p.aspectRatio ?? '16:9';
  if (aspect !== '16:9' && aspect !== '9:16') return badRequest(`aspectRatio ${aspect} is not supported; use 16:9 or 9:16.`, 'parameters.aspectRatio');
  const seconds = p.durationSeconds ?? 8;
  if (typeof seconds !== 'number' || !rules.durations.includes(seconds))
    return badRequest(
      `The number value for \`durationSeconds\` is out of bound. Please provide a value between ${rules.durations[0]} and 8, inclusive.`,
      'parameters.durationSeconds',
    );
  const resolution = p.resolution ?? '720p';
  if (!rules.resolutions.includes(resolution)) return badRequest(`resolution ${resolution} is not supported by ${model}.`, 'parameters.resolution');
  if (resolution !== '720p' && seconds !== 8) return badRequest(`resolution ${resolution} requires durationSeconds 8.`, 'parameters.resolution');
  for (const key of ['image', 'lastFrame'] as const) {
    const img = i[key];
    if (img !== undefined && (typeof img.bytesBase64Encoded !== 'string' || !/^image\//.test(img.mimeType ?? '')))
      return badRequest(`instances[0].${key} must have bytesBase64Encoded and mimeType.`, `instances[0].${key}`);
  }
  if (i.lastFrame !== undefined && !rules.lastFrame) return badRequest(`\`lastFrame\` isn't supported by this model.`, 'instances[0].lastFrame');
  if (i.lastFrame !== undefined && i.image === undefined) return badRequest('lastFrame requires image.', 'instances[0].lastFrame');
  const refs = i.referenceImages ?? [];
  if (refs.length > rules.references)
    return badRequest(`\`referenceImages\` isn't supported by this model or has too many elements.`, 'instances[0].referenceImages');
  const base = resolution === '4k' ? [3840, 2160] : resolution === '1080p' ? [1920, 1080] : [1280, 720];
  const [width, height] = aspect === '16:9' ? base : [base[1]!, base[0]!];
  return { width: width!, height: height!, seconds, prompt: i.prompt };
}
