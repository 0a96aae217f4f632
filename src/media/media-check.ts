/**
 * Probed media facts against a family's limits (contract/media-limits.ts). Every failure is a 400
 * `invalid_media` whose message names the field with its index and the rule, in the contract's
 * terms: `reference_images[2]: aspect ratio 3.75 is outside (0.4, 2.5)`.
 */
import type { AudioLimits, ClosedRange, ImageLimits, OpenRange, VideoLimits } from '../contract/media-limits.js';
import { AppError } from '../errors.js';
import type { MediaFacts } from './media-facts.js';

const MB = 1024 * 1024;

/** A number as people write it: at most 2 decimals, no trailing zeros. */
const num = (n: number): string => String(Math.round(n * 100) / 100);
const mb = (bytes: number): string => `${num(bytes / MB)} MB`;
const open = (r: OpenRange): string => `(${num(r.min)}, ${num(r.max)})`;
const closed = (r: ClosedRange, unit = ''): string => `${num(r.min)}-${num(r.max)}${unit}`;

export function invalidMedia(field: string, rule: string): AppError {
  return new AppError('invalid_media', `${field}: ${rule}`, { param: field });
}

/** `field` names the medium (`image_urls[2]`); `facts.kind` is checked by the prober already. */
export function checkImage(field: string, facts: MediaFacts, limits: ImageLimits): void {
  if (!(limits.formats as readonly string[]).includes(facts.format)) {
    throw invalidMedia(field, `image format ${facts.format} is not accepted here; use ${limits.formats.join(', ')}`);
  }
  if (facts.bytes > limits.maxBytes) throw invalidMedia(field, `image is ${mb(facts.bytes)}; the limit is ${mb(limits.maxBytes)}`);
  const w = facts.width ?? 0;
  const h = facts.height ?? 0;
  if (limits.exactSizes && !limits.exactSizes.some((s) => s.width === w && s.height === h)) {
    throw invalidMedia(
      field,
      `image is ${w}x${h}; this model accepts only ${limits.exactSizes.map((s) => `${s.width}x${s.height}`).join(' or ')} (matching the requested ratio)`,
    );
  }
  if (limits.side && !(w > limits.side.min && w < limits.side.max && h > limits.side.min && h < limits.side.max)) {
    throw invalidMedia(field, `image is ${w}x${h} px; width and height must be within ${open(limits.side)} px`);
  }
  if (limits.aspect) {
    const ratio = w / h;
    if (!(ratio > limits.aspect.min && ratio < limits.aspect.max)) {
      throw invalidMedia(field, `aspect ratio ${num(ratio)} is outside ${open(limits.aspect)}`);
    }
  }
}

export function checkVideo(field: string, facts: MediaFacts, limits: VideoLimits): void {
  if (!(limits.formats as readonly string[]).includes(facts.format)) {
    throw invalidMedia(field, `video format ${facts.format} is not accepted here; use ${limits.formats.join(' or ')}`);
  }
  if (facts.bytes > limits.maxBytes) throw invalidMedia(field, `video is ${mb(facts.bytes)}; the limit is ${mb(limits.maxBytes)}`);
  checkDuration(field, 'video', facts, limits.duration);
  if (limits.fps) {
    const fps = facts.fps;
    if (fps === undefined || fps < limits.fps.min - 0.01 || fps > limits.fps.max + 0.01) {
      throw invalidMedia(field, `frame rate ${fps === undefined ? 'unknown' : `${num(fps)} fps`} is outside ${closed(limits.fps, ' fps')}`);
    }
  }
  if (limits.shortSide) {
    const short = Math.min(facts.width ?? 0, facts.height ?? 0);
    if (short < limits.shortSide.min || short > limits.shortSide.max) {
      throw invalidMedia(field, `video is ${facts.width ?? 0}x${facts.height ?? 0}; its resolution (shorter side) must be ${closed(limits.shortSide, ' px')}`);
    }
  }
}

export function checkAudio(field: string, facts: MediaFacts, limits: AudioLimits): void {
  if (!(limits.formats as readonly string[]).includes(facts.format)) {
    throw invalidMedia(field, `audio format ${facts.format} is not accepted here; use ${limits.formats.join(' or ')}`);
  }
  if (facts.bytes > limits.maxBytes) throw invalidMedia(field, `audio is ${mb(facts.bytes)}; the limit is ${mb(limits.maxBytes)}`);
  checkDuration(field, 'audio', facts, limits.duration);
}

function checkDuration(field: string, what: string, facts: MediaFacts, range: ClosedRange | undefined): void {
  if (!range) return;
  const d = facts.duration;
  if (d === undefined || d < range.min - 0.05 || d > range.max + 0.05) {
    throw invalidMedia(field, `${what} is ${d === undefined ? 'of unknown length' : `${num(d)} s long`}; each must be ${closed(range, ' s')}`);
  }
}

/** Totals over all files of one field (`referenceVideos`): duration and bytes. */
export function checkTotals(field: string, what: string, all: readonly MediaFacts[], limits: { totalDuration?: number; totalBytes?: number }): void {
  if (limits.totalDuration !== undefined) {
    const total = all.reduce((s, f) => s + (f.duration ?? 0), 0);
    if (total > limits.totalDuration + 0.05) {
      throw invalidMedia(field, `the ${what} last ${num(total)} s in all; at most ${num(limits.totalDuration)} s are allowed`);
    }
  }
  if (limits.totalBytes !== undefined) {
    const total = all.reduce((s, f) => s + f.bytes, 0);
    if (total > limits.totalBytes) throw invalidMedia(field, `the ${what} are ${mb(total)} in all; at most ${mb(limits.totalBytes)} are allowed`);
  }
}
