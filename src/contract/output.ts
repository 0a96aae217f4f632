/**
 * What a task must produce, worked out from the request at submit (D19) and stored
 * with it, so every provider (and the sandbox above all) makes media of the size asked for.
 */
export type OutputSpec =
  | { kind: 'image'; width: number; height: number; format: 'png' | 'jpeg' }
  | {
      kind: 'video';
      width: number;
      height: number;
      durationSec: number;
      fps: number;
      audio: boolean;
      /** `adaptive` ratio: the producer takes the aspect of the first image (width/height above are the 16:9 fallback). */
      adaptiveResolution?: string;
    };

/** Long side in pixels for an image `resolution` (D19). */
export const IMAGE_LONG_SIDE = { '1k': 1024, '2k': 2048, '4k': 4096 } as const;
export type ImageResolution = keyof typeof IMAGE_LONG_SIDE;

/**
 * Pixel size for an aspect ratio `w:h` whose long side is `longSide`, the short side rounded to the
 * nearest pixel (or the nearest even pixel, as H.264 needs), so the aspect is within 1% of the
 * ratio asked (21:9 at 1024 gives 1024x439: 2.3326 vs 2.3333).
 */
export function sizeForAspect(aspect: string, longSide: number, evenSides = false): { width: number; height: number } {
  // the two numbers read without split/map arrays or a closure: this runs on every submit (issue 25);
  // the same values as `aspect.split(':').map(Number)`'s first two (no colon: no height, NaN sizes)
  const colon = aspect.indexOf(':');
  const w = Number(colon === -1 ? aspect : aspect.slice(0, colon));
  const next = colon === -1 ? -1 : aspect.indexOf(':', colon + 1);
  const h = colon === -1 ? Number.NaN : Number(next === -1 ? aspect.slice(colon + 1) : aspect.slice(colon + 1, next));
  if (w >= h) return { width: longSide, height: roundSide((longSide * h) / w, evenSides) };
  return { width: roundSide((longSide * w) / h, evenSides), height: longSide };
}

/** A side in whole pixels, at least 1 (or even, at least 2, as H.264 needs). */
const roundSide = (n: number, evenSides: boolean): number => (evenSides ? Math.max(2, Math.round(n / 2) * 2) : Math.max(1, Math.round(n)));

/** Video pixel sizes by resolution for landscape 16:9 (D19); portrait swaps them. */
export const VIDEO_RESOLUTIONS = {
  '480p': { width: 854, height: 480 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
  '4k': { width: 3840, height: 2160 },
} as const;
export type VideoResolution = keyof typeof VIDEO_RESOLUTIONS;

/** Frames per second of every produced video. */
export const VIDEO_FPS = 24;

/**
 * A video's pixel size for a resolution (case-insensitive: `4K` = `4k`) and an aspect ratio
 * (`16:9`, `9:16`, `1:1`, `4:3`, `3:4`, `21:9`): the short side of the resolution is kept for
 * landscape ratios (the long side for 21:9 grows), sides even. `16:9` and `9:16` give exactly the
 * sizes of D19.
 */
export function videoSize(resolution: string, aspect: string): { width: number; height: number } {
  const base = VIDEO_RESOLUTIONS[resolution.toLowerCase() as VideoResolution];
  if (!base) throw new Error(`unknown video resolution ${resolution}`);
  if (aspect === '16:9') return { ...base };
  if (aspect === '9:16') return { width: base.height, height: base.width };
  const [w, h] = aspect.split(':').map(Number) as [number, number];
  const short = base.height;
  const even = (n: number): number => Math.max(2, Math.round(n / 2) * 2);
  return w >= h ? { width: even((short * w) / h), height: short } : { width: short, height: even((short * h) / w) };
}

/** The output of a video task; `aspect` may be `adaptive` (the first image's aspect, else 16:9). */
export function videoOutput(resolution: string, aspect: string, durationSec: number, audio: boolean): OutputSpec {
  if (aspect === 'adaptive') {
    return { kind: 'video', ...videoSize(resolution, '16:9'), durationSec, fps: VIDEO_FPS, audio, adaptiveResolution: resolution.toLowerCase() };
  }
  return { kind: 'video', ...videoSize(resolution, aspect), durationSec, fps: VIDEO_FPS, audio };
}

/** Size for an `adaptive` video: the resolution's short side, the image's aspect, even sides. */
export function adaptiveVideoSize(resolution: string, imageWidth: number, imageHeight: number): { width: number; height: number } {
  const short = VIDEO_RESOLUTIONS[resolution.toLowerCase() as VideoResolution].height;
  const even = (n: number): number => Math.max(2, Math.round(n / 2) * 2);
  return imageWidth >= imageHeight
    ? { width: even((short * imageWidth) / imageHeight), height: short }
    : { width: short, height: even((short * imageHeight) / imageWidth) };
}
