/**
 * What each Gemini API model takes (G145): the image models (`generateContent` with an
 * IMAGE modality) and the Veo models (`predictLongRunning`). The model is the route's upstream
 * name; a name not listed is judged by its family: `veo-2*` as Veo 2, `veo-3.0*` as Veo 3, any
 * other `veo-*` as Veo 3.1; `*2.5*` image names as gemini-2.5-flash-image, other image names as
 * gemini-3-pro-image-preview (the newest rules).
 */

/** Aspect ratios every Gemini image model takes (`imageConfig.aspectRatio`). */
export const IMAGE_ASPECTS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;

export interface ImageModelRules {
  kind: 'flash-2.5' | 'pro-3';
  /** `imageConfig.imageSize` values it takes; empty: it has none (1K only, the field is not sent). */
  imageSizes: readonly ('1K' | '2K' | '4K')[];
  /** Reference images (inline parts) it takes. */
  maxImages: number;
}

export const IMAGE_RULES: Record<ImageModelRules['kind'], ImageModelRules> = {
  'flash-2.5': { kind: 'flash-2.5', imageSizes: [], maxImages: 3 },
  'pro-3': { kind: 'pro-3', imageSizes: ['1K', '2K', '4K'], maxImages: 14 },
};

export const isVeo = (upstreamModel: string): boolean => upstreamModel.toLowerCase().startsWith('veo');

export function imageRulesOf(upstreamModel: string): ImageModelRules {
  return upstreamModel.includes('2.5') ? IMAGE_RULES['flash-2.5'] : IMAGE_RULES['pro-3'];
}

export interface VeoRules {
  kind: 'veo-3.1' | 'veo-3' | 'veo-2';
  durations: readonly number[];
  resolutions: readonly ('720p' | '1080p' | '4k')[];
  /** Resolutions above 720p (and reference images) need this duration (the API's rule). */
  longOnly: number;
  /** true: every video has sound (the Gemini API takes no `generateAudio`); false: none has. */
  audio: boolean;
  lastFrame: boolean;
  /** `referenceImages` (asset references) it takes. */
  maxReferences: number;
}

export const VEO_RULES: Record<VeoRules['kind'], VeoRules> = {
  'veo-3.1': { kind: 'veo-3.1', durations: [4, 6, 8], resolutions: ['720p', '1080p', '4k'], longOnly: 8, audio: true, lastFrame: true, maxReferences: 3 },
  'veo-3': { kind: 'veo-3', durations: [4, 6, 8], resolutions: ['720p', '1080p'], longOnly: 8, audio: true, lastFrame: false, maxReferences: 0 },
  'veo-2': { kind: 'veo-2', durations: [6, 8], resolutions: ['720p'], longOnly: 8, audio: false, lastFrame: true, maxReferences: 0 },
};

export function veoRulesOf(upstreamModel: string): VeoRules {
  const m = upstreamModel.toLowerCase();
  if (m.startsWith('veo-2')) return VEO_RULES['veo-2'];
  if (m.startsWith('veo-3.0')) return VEO_RULES['veo-3'];
  return VEO_RULES['veo-3.1'];
}
