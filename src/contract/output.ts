/**
 * What a task must produce, worked out from the request at submit (decisions.md #19) and stored
 * with it, so every provider (and the sandbox above all) makes media of the size asked for.
 */
export type OutputSpec =
  | { kind: 'image'; width: number; height: number; format: 'png' | 'jpeg' }
  | { kind: 'video'; width: number; height: number; durationSec: number; fps: number; audio: boolean };

/** Long side in pixels for an image `resolution` (decisions.md #19). */
export const IMAGE_LONG_SIDE = { '1k': 1024, '2k': 2048, '4k': 4096 } as const;
export type ImageResolution = keyof typeof IMAGE_LONG_SIDE;

/**
 * Pixel size for an aspect ratio `w:h` whose long side is `longSide`, the short side rounded to the
 * nearest pixel (or the nearest even pixel, as H.264 needs), so the aspect is within 1% of the
 * ratio asked (21:9 at 1024 gives 1024x439: 2.3326 vs 2.3333).
 */
export function sizeForAspect(aspect: string, longSide: number, evenSides = false): { width: number; height: number } {
  const [w, h] = aspect.split(':').map(Number) as [number, number];
  const round = (n: number): number => (evenSides ? Math.max(2, Math.round(n / 2) * 2) : Math.max(1, Math.round(n)));
  if (w >= h) return { width: longSide, height: round((longSide * h) / w) };
  return { width: round((longSide * w) / h), height: longSide };
}
