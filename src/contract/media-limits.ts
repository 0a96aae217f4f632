/**
 * What caller media must be, per family and model (docs/reference/api/media.md#rules and each family's page):
 * formats, byte sizes, pixel sizes, aspect ratios, durations, frame rates and totals. Counts are
 * checked by the request schemas; everything that needs the file itself is checked against these
 * at submit (media/media-review.ts) and for uploaded assets. Decisions: G60-G68.
 */
import type { FamilyId } from './families.js';
import type { SubmitPlan } from './submit-plan.js';

const MB = 1024 * 1024;

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'bmp' | 'tiff' | 'gif' | 'heic' | 'heif';
export type VideoFormat = 'mp4' | 'mov';
export type AudioFormat = 'wav' | 'mp3';

/** An open interval (min, max): both ends excluded, as the contract writes them. */
export interface OpenRange {
  min: number;
  max: number;
}
/** A closed interval [min, max]. */
export interface ClosedRange {
  min: number;
  max: number;
}

export interface ImageLimits {
  formats: readonly ImageFormat[];
  /** Bytes, at most. */
  maxBytes: number;
  /** width / height, strictly inside. */
  aspect?: OpenRange;
  /** Both width and height strictly inside, in pixels. */
  side?: OpenRange;
  /** Only these exact pixel sizes (reel Form B). */
  exactSizes?: ReadonlyArray<{ width: number; height: number }>;
}

export interface VideoLimits {
  formats: readonly VideoFormat[];
  maxBytes: number;
  /** Seconds per file. */
  duration?: ClosedRange;
  /** Seconds over all files of the field, at most. */
  totalDuration?: number;
  /** Bytes over all files of the field, at most. */
  totalBytes?: number;
  /** Frames per second. */
  fps?: ClosedRange;
  /** The shorter side in pixels (the "720p" of a video). */
  shortSide?: ClosedRange;
}

export interface AudioLimits {
  formats: readonly AudioFormat[];
  maxBytes: number;
  duration?: ClosedRange;
  totalDuration?: number;
}

/** Limits by media role; a role without limits does not occur in that family. */
export interface MediaLimits {
  /** First and last frames. */
  frames: ImageLimits;
  /** Reference images. */
  images: ImageLimits;
  videos?: VideoLimits;
  audios?: AudioLimits;
}

const COMMON_IMAGE_FORMATS: readonly ImageFormat[] = ['jpeg', 'png', 'webp', 'bmp', 'tiff', 'gif'];
const WITH_HEIF: readonly ImageFormat[] = [...COMMON_IMAGE_FORMATS, 'heic', 'heif'];

/** Families whose tables give no image rule beyond counts (pic, clip, reel Form A): any common format under 30 MB (G61). */
const GENERAL_IMAGE: ImageLimits = { formats: COMMON_IMAGE_FORMATS, maxBytes: 30 * MB };

/** motion and Model Center images: formats, aspect ratio in (0.4, 2.5), sides in (300, 6000) px, under 30 MB. */
const reviewedImage = (formats: readonly ImageFormat[]): ImageLimits => ({
  formats,
  maxBytes: 30 * MB,
  aspect: { min: 0.4, max: 2.5 },
  side: { min: 300, max: 6000 },
});

const MC_20_VIDEO: VideoLimits = {
  formats: ['mp4', 'mov'],
  maxBytes: 50 * MB,
  duration: { min: 2, max: 15 },
  totalDuration: 15,
  fps: { min: 24, max: 60 },
};
const MC_20_AUDIO: AudioLimits = { formats: ['wav', 'mp3'], maxBytes: 15 * MB, duration: { min: 2, max: 15 }, totalDuration: 15 };
const MC_20: MediaLimits = { frames: reviewedImage(WITH_HEIF), images: reviewedImage(WITH_HEIF), videos: MC_20_VIDEO, audios: MC_20_AUDIO };
/** sd_2.5_special_v1: longer videos and audio (2-30 s each, 30 s in all); file size and frame rate as for 2.0 (G63). */
const MC_25: MediaLimits = {
  ...MC_20,
  videos: { ...MC_20_VIDEO, duration: { min: 2, max: 30 }, totalDuration: 30 },
  audios: { ...MC_20_AUDIO, duration: { min: 2, max: 30 }, totalDuration: 30 },
};

/**
 * Limits for anything reviewed outside a family (uploaded assets): the widest of the Model Center
 * rules, so an approved asset passes review unless a family is stricter.
 */
export const ASSET_LIMITS: MediaLimits = MC_25;

const VIDEOS_FAMILY: MediaLimits = {
  frames: GENERAL_IMAGE,
  images: { formats: COMMON_IMAGE_FORMATS, maxBytes: 20 * MB },
  videos: { formats: ['mp4', 'mov'], maxBytes: 200 * MB, totalDuration: 15, totalBytes: 200 * MB, shortSide: { min: 720, max: 2160 } },
};

/** The Model Center models that follow the 2.0 media rules (docs/reference/api/model-center.md#media: `sd_2.0_fast_discount`, `sd_2.0_mini_special`; G62: every sd_2.0 id). */
const isSd20 = (model: string): boolean => model.startsWith('sd_2.0_');

type LimitsPlan = Pick<SubmitPlan, 'family' | 'form' | 'model' | 'output'>;

const GENERAL: MediaLimits = { frames: GENERAL_IMAGE, images: GENERAL_IMAGE };

/** The media rules of each family, by the request. */
const LIMITS_BY_FAMILY: Record<FamilyId, (plan: LimitsPlan) => MediaLimits> = {
  pic: () => GENERAL,
  clip: () => GENERAL,
  reel: (plan) => {
    if (plan.form !== 'B') return GENERAL;
    // Form B: only 1280x720 or 720x1280, and the one matching the requested ratio
    const { width, height } = plan.output.kind === 'video' ? plan.output : { width: 720, height: 1280 };
    const image: ImageLimits = { ...GENERAL_IMAGE, exactSizes: [{ width, height }] };
    return { frames: image, images: image };
  },
  motion: (plan) => {
    const image = reviewedImage(plan.model.startsWith('motion_1_5_pro') ? WITH_HEIF : COMMON_IMAGE_FORMATS);
    return { frames: image, images: image };
  },
  videos: () => VIDEOS_FAMILY,
  'model-center': (plan) => {
    if (plan.model.startsWith('sd_2.5_')) return MC_25;
    if (isSd20(plan.model) || plan.model === 'motion 1.5_pro') return MC_20;
    // other published models: the Model Center image rules, videos and audio as for 2.5 (G62)
    return MC_25;
  },
};

/** The limits for a validated create request. */
export function mediaLimitsFor(plan: LimitsPlan): MediaLimits {
  return LIMITS_BY_FAMILY[plan.family](plan);
}
