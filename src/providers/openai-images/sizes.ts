/**
 * The `size` sent to an OpenAI image model for the pixel size a task asks for (G130).
 * A size the caller gave in pixels (`size: "WxH"`) is sent as it is or refused; a size worked out
 * from an aspect ratio and a resolution is the model's nearest: gpt-image-2 the closest `WxH` its
 * rules allow (sides multiples of 16, ratio <= 3:1, 655,360 to 8,294,400 pixels, long side <= 3840),
 * the fixed-size models the size of nearest aspect, never larger than the resolution asked allows.
 */
import type { Refusal } from '../types.js';
import { FREE_SIZE, type ImageModelRules } from './models.js';

export interface SizeRequest {
  width: number;
  height: number;
  /** The caller gave these pixels exactly (Model Center `size: "WxH"`). */
  exact: boolean;
  /** The request fields to name in a refusal. */
  fields: { aspect: string; resolution: string; size: string };
  /** What the caller wrote, for messages (`16:9`, `4k`, `1000x1000`). */
  said: { aspect: string; resolution: string };
}

export interface UpstreamSize {
  width: number;
  height: number;
}

const label = ([w, h]: readonly [number, number]): string => `${w}x${h}`;
const list = (sizes: readonly (readonly [number, number])[]): string => sizes.map(label).join(', ');

/** Why gpt-image-2 would refuse `w`x`h`, or undefined when it takes it. */
export function freeSizeProblem(w: number, h: number): string | undefined {
  const { step, maxEdge, maxRatio, minPixels, maxPixels } = FREE_SIZE;
  if (w % step !== 0 || h % step !== 0) return `both sides must be multiples of ${step}`;
  if (Math.max(w, h) > maxEdge) return `the long side must be at most ${maxEdge}`;
  if (Math.max(w, h) / Math.min(w, h) > maxRatio) return `the aspect ratio must be within ${maxRatio}:1`;
  if (w * h < minPixels || w * h > maxPixels) return `it must have ${minPixels} to ${maxPixels} pixels`;
  return undefined;
}

/** The free size nearest to `w`x`h`: same aspect as close as 16 px steps allow, scaled into the pixel and edge bounds. */
function nearestFreeSize(w: number, h: number): UpstreamSize | undefined {
  const { step, maxEdge, minPixels, maxPixels } = FREE_SIZE;
  let scale = 1;
  if (w * h < minPixels) scale = Math.sqrt(minPixels / (w * h));
  if (w * h > maxPixels) scale = Math.sqrt(maxPixels / (w * h));
  scale = Math.min(scale, maxEdge / Math.max(w, h));
  const [sw, sh] = [w * scale, h * scale];
  const sides = (n: number): number[] => [Math.floor(n / step) * step, Math.ceil(n / step) * step].filter((v) => v > 0);
  const ratio = Math.log(w / h);
  const fits = sides(sw)
    .flatMap((cw) => sides(sh).map((ch) => ({ width: cw, height: ch })))
    .filter((s) => freeSizeProblem(s.width, s.height) === undefined)
    .sort(
      (a, b) =>
        Math.abs(Math.log(a.width / a.height) - ratio) - Math.abs(Math.log(b.width / b.height) - ratio) ||
        Math.abs(a.width * a.height - sw * sh) - Math.abs(b.width * b.height - sw * sh),
    );
  return fits[0];
}

/** The size to send, or why the model cannot make what is asked. */
export function upstreamSize(model: string, rules: ImageModelRules, req: SizeRequest): UpstreamSize | Refusal {
  const { width: w, height: h } = req;
  const asked = `${w}x${h}`;
  if (!rules.sizes) {
    if (req.exact) {
      const problem = freeSizeProblem(w, h);
      return problem ? { field: req.fields.size, message: `size ${asked}: ${model} cannot make it (${problem})` } : { width: w, height: h };
    }
    if (Math.max(w, h) / Math.min(w, h) > FREE_SIZE.maxRatio) {
      return { field: req.fields.aspect, message: `${req.fields.aspect} ${req.said.aspect}: ${model} makes aspect ratios up to ${FREE_SIZE.maxRatio}:1` };
    }
    return nearestFreeSize(w, h) ?? { field: req.fields.aspect, message: `${req.fields.aspect} ${req.said.aspect}: ${model} has no size near ${asked}` };
  }
  const sizes = rules.sizes;
  if (req.exact) {
    const same = sizes.find(([sw, sh]) => sw === w && sh === h);
    return same ? { width: w, height: h } : { field: req.fields.size, message: `size ${asked}: ${model} makes ${list(sizes)} only` };
  }
  if (w !== h && sizes.every(([sw, sh]) => sw === sh)) {
    return { field: req.fields.aspect, message: `${req.fields.aspect} ${req.said.aspect}: ${model} makes square images only (${list(sizes)})` };
  }
  const longest = Math.max(...sizes.map(([sw, sh]) => Math.max(sw, sh)));
  if (Math.max(w, h) > longest) {
    return {
      field: req.fields.resolution,
      message: `${req.fields.resolution} ${req.said.resolution}: ${model} makes images up to ${longest} px on the long side (${list(sizes)})`,
    };
  }
  const ratio = Math.log(w / h);
  const long = Math.max(w, h);
  const [best] = [...sizes].sort(
    (a, b) =>
      Math.abs(Math.log(a[0] / a[1]) - ratio) - Math.abs(Math.log(b[0] / b[1]) - ratio) || Math.abs(Math.max(...a) - long) - Math.abs(Math.max(...b) - long),
  );
  return { width: best![0], height: best![1] };
}
