/**
 * The sandbox provider's image renderer: a deterministic picture made from the request itself. A
 * smooth gradient from a hash of the seed, the prompt drawn in the built-in bitmap font on a dark
 * panel, and the reference images as a row of framed thumbnails along the bottom. The same spec
 * always gives the same bytes; nothing depends on system fonts.
 */
import { createHash } from 'node:crypto';
import { loadSharp } from '../../media/sharp.js';
import { FONT_METRICS, renderTextMask } from '../../media/bitmap-font.js';

/** What to draw. */
export interface SandboxImageSpec {
  /** Exact output width in pixels, 1 to {@link MAX_SANDBOX_IMAGE_SIDE}. */
  width: number;
  /** Exact output height in pixels, 1 to {@link MAX_SANDBOX_IMAGE_SIDE}. */
  height: number;
  /** Drawn visibly on the image, wrapped, on a high-contrast panel. */
  prompt: string;
  /** Any string; the background colours derive from a hash of it. */
  seed: string;
  /** Encoded images (png/jpeg/webp/...) shown as thumbnails along the bottom, in order. */
  references?: Buffer[];
  /** Output encoding. */
  format: 'png' | 'jpeg';
}

/** Largest accepted width or height. */
export const MAX_SANDBOX_IMAGE_SIDE = 4096;

/** Thrown when a reference image cannot be decoded; `index` is its position in `references`. */
export class ReferenceDecodeError extends Error {
  readonly index: number;
  /** What the decoder said. */
  readonly detail: string;

  constructor(index: number, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`reference image ${index} could not be decoded: ${detail}`, { cause });
    this.name = 'ReferenceDecodeError';
    this.index = index;
    this.detail = detail;
  }
}

/** The background is computed at most this many pixels on a side, then scaled up (nearest). */
const GRADIENT_MAX_SIDE = 512;
/** Control points per side of the seed's colour grid. */
const GRID = 4;
/** Panel tint (RGB) and its opacity out of 255; the ink is pure white. */
const PANEL_RGBA = [14, 14, 18, 210] as const;
/** Thumbnail frame, also the backdrop of transparent references. */
const FRAME = { r: 245, g: 245, b: 245, alpha: 1 } as const;

interface Raw {
  data: Buffer;
  width: number;
  height: number;
}

/** HSL (h in degrees, s and l in 0-1) to 0-255 RGB. */
function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const hp = (((h % 360) + 360) % 360) / 60;
  const x = c * (1 - Math.abs((hp % 2) - 1));
  const [r, g, b] = hp < 1 ? [c, x, 0] : hp < 2 ? [x, c, 0] : hp < 3 ? [0, c, x] : hp < 4 ? [0, x, c] : hp < 5 ? [x, 0, c] : [c, 0, x];
  const m = l - c / 2;
  return [(r + m) * 255, (g + m) * 255, (b + m) * 255];
}

/** The seed's GRID x GRID control colours (RGB triples, row-major): related hues, mid lightness. */
function seedColours(seed: string): Float64Array {
  const hash = createHash('sha512').update(`mediagate-sandbox\0${seed}`).digest();
  const baseHue = (hash.readUInt16BE(0) / 65536) * 360;
  const out = new Float64Array(GRID * GRID * 3);
  for (let i = 0; i < GRID * GRID; i++) {
    const k = 2 + i * 3;
    const hue = baseHue + (hash.readUInt8(k) / 255 - 0.5) * 140;
    const sat = 0.45 + (hash.readUInt8(k + 1) / 255) * 0.4;
    const light = 0.3 + (hash.readUInt8(k + 2) / 255) * 0.35;
    out.set(hslToRgb(hue, sat, light), i * 3);
  }
  return out;
}

/** Uniform cubic B-spline taps (clamped control indices and weights) for `n` samples over the grid. */
function splineTaps(n: number): { idx: Int32Array; w: Float64Array } {
  const idx = new Int32Array(n * 4);
  const w = new Float64Array(n * 4);
  for (let p = 0; p < n; p++) {
    const u = ((p + 0.5) / n) * (GRID - 1);
    const i = Math.min(Math.floor(u), GRID - 2);
    const t = u - i;
    const t2 = t * t;
    const t3 = t2 * t;
    const s = 1 - t;
    const weights = [(s * s * s) / 6, (3 * t3 - 6 * t2 + 4) / 6, (-3 * t3 + 3 * t2 + 3 * t + 1) / 6, t3 / 6];
    for (let k = 0; k < 4; k++) {
      idx[p * 4 + k] = Math.min(GRID - 1, Math.max(0, i - 1 + k));
      w[p * 4 + k] = weights[k] ?? 0;
    }
  }
  return { idx, w };
}

/**
 * The background at reduced size (at most GRADIENT_MAX_SIDE a side, same aspect): a cubic B-spline
 * surface over the seed's control colours, evaluated separably with plain IEEE arithmetic (no
 * platform maths functions), so it is identical on every machine.
 */
function seedGradient(seed: string, width: number, height: number): Raw {
  const factor = Math.max(1, Math.ceil(Math.max(width, height) / GRADIENT_MAX_SIDE));
  const w = Math.ceil(width / factor);
  const h = Math.ceil(height / factor);
  const grid = seedColours(seed);
  const xs = splineTaps(w);
  const ys = splineTaps(h);
  // Horizontal pass: one interpolated row per control row.
  const rows = new Float64Array(GRID * w * 3);
  for (let r = 0; r < GRID; r++) {
    for (let x = 0; x < w; x++) {
      for (let k = 0; k < 4; k++) {
        const src = (r * GRID + (xs.idx[x * 4 + k] ?? 0)) * 3;
        const wt = xs.w[x * 4 + k] ?? 0;
        const dst = (r * w + x) * 3;
        for (let c = 0; c < 3; c++) rows[dst + c] = (rows[dst + c] ?? 0) + (grid[src + c] ?? 0) * wt;
      }
    }
  }
  // Vertical pass; the clamped view rounds (half to even) and clamps on store.
  const data = Buffer.alloc(w * h * 3);
  const out = new Uint8ClampedArray(data.buffer, data.byteOffset, data.length);
  const rowLen = w * 3;
  for (let y = 0; y < h; y++) {
    const [w0 = 0, w1 = 0, w2 = 0, w3 = 0] = ys.w.subarray(y * 4, y * 4 + 4);
    const [s0 = 0, s1 = 0, s2 = 0, s3 = 0] = Array.from(ys.idx.subarray(y * 4, y * 4 + 4), (r) => r * rowLen);
    const o = y * rowLen;
    for (let i = 0; i < rowLen; i++) {
      out[o + i] = rows[s0 + i]! * w0 + rows[s1 + i]! * w1 + rows[s2 + i]! * w2 + rows[s3 + i]! * w3;
    }
  }
  return { data, width: w, height: h };
}

/** Tones the rectangle of `mask` plus `pad` at (left, top) towards the panel colour, then paints the ink white. */
function drawPanel(canvas: Raw, mask: Raw, left: number, top: number, pad: number): void {
  const [r, g, b, alpha] = PANEL_RGBA;
  const tone = (c: number): Uint8Array => Uint8Array.from({ length: 256 }, (_, v) => Math.round((v * (255 - alpha) + c * alpha) / 255));
  const [lr, lg, lb] = [tone(r), tone(g), tone(b)];
  const d = canvas.data;
  const rowBytes = (mask.width + 2 * pad) * 3;
  for (let y = 0; y < mask.height + 2 * pad; y++) {
    const row = ((top + y) * canvas.width + left) * 3;
    for (let i = row; i < row + rowBytes; i += 3) {
      d[i] = lr[d[i]!]!;
      d[i + 1] = lg[d[i + 1]!]!;
      d[i + 2] = lb[d[i + 2]!]!;
    }
  }
  for (let y = 0; y < mask.height; y++) {
    const src = y * mask.width;
    const dst = ((top + pad + y) * canvas.width + left + pad) * 3;
    let x = 0;
    while (x < mask.width) {
      if (mask.data[src + x] === 0) {
        x++;
        continue;
      }
      const start = x;
      while (x < mask.width && mask.data[src + x] !== 0) x++;
      d.fill(255, dst + start * 3, dst + x * 3);
    }
  }
}

/** Where the prompt goes: its mask and the panel's top-left corner and padding. */
interface PromptLayout {
  mask: Raw;
  left: number;
  top: number;
  pad: number;
}

/** Lays out the prompt panel, centred in the band between `margin` and `bottom`; null when nothing fits. */
function layoutPrompt(prompt: string, width: number, height: number, margin: number, bottom: number): PromptLayout | null {
  const targetScale = Math.max(1, Math.round((Math.min(width, height) * 0.045) / FONT_METRICS.capHeight));
  const pad = Math.max(2, targetScale * 3);
  const maxPanelH = Math.min(Math.floor(height * 0.4), bottom - margin);
  const mask = renderTextMask(prompt, {
    maxWidth: Math.floor(width * 0.9) - 2 * pad,
    maxHeight: maxPanelH - 2 * pad,
    scale: targetScale,
    align: 'center',
  });
  if (mask.width === 0) return null;
  const left = Math.floor((width - mask.width - 2 * pad) / 2);
  const top = Math.max(0, margin + Math.floor((bottom - margin - mask.height - 2 * pad) / 2));
  return { mask, left, top, pad };
}

/** Geometry of the thumbnail row along the bottom. */
interface ReferenceRow {
  /** Box each thumbnail is scaled to fit, frame included. */
  slotW: number;
  rowH: number;
  gap: number;
  rowTop: number;
  /** Height the row takes from the bottom of the image, margin included. */
  reserved: number;
}

function layoutReferenceRow(count: number, width: number, height: number, margin: number): ReferenceRow {
  const rowH = Math.max(1, Math.round(height * 0.18));
  const rowW = Math.max(1, width - 2 * margin);
  let gap = Math.max(1, Math.round(Math.min(width, height) * 0.015));
  if (rowW - gap * (count - 1) < count) gap = 0;
  const slotW = Math.max(1, Math.min(Math.round(rowH * 1.6), Math.floor((rowW - gap * (count - 1)) / count)));
  return { slotW, rowH, gap, rowTop: height - margin - rowH, reserved: rowH + margin };
}

/** Decodes one reference into a framed RGB thumbnail fitting `boxW` x `boxH` (transparency on the frame colour). */
async function thumbnail(ref: Buffer, index: number, boxW: number, boxH: number): Promise<Raw> {
  const frame = boxW >= 8 && boxH >= 8 ? Math.max(1, Math.round(Math.min(boxW, boxH) * 0.03)) : 0;
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(ref)
      .rotate()
      .flatten({ background: FRAME })
      .resize(Math.max(1, boxW - 2 * frame), Math.max(1, boxH - 2 * frame), { fit: 'inside' })
      .extend({ top: frame, bottom: frame, left: frame, right: frame, background: FRAME })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels`);
    return { data, width: info.width, height: info.height };
  } catch (err) {
    throw new ReferenceDecodeError(index, err);
  }
}

/** Decodes every reference in parallel; on failure rejects with the lowest failing index. */
async function decodeReferences(refs: Buffer[], row: ReferenceRow): Promise<Raw[]> {
  const settled = await Promise.allSettled(refs.map((ref, i) => thumbnail(ref, i, row.slotW, row.rowH)));
  return settled.map((s) => {
    if (s.status === 'rejected') throw s.reason;
    return s.value;
  });
}

/** Copies an RGB raster onto the canvas at (left, top) if it lies wholly inside. */
function blit(canvas: Raw, img: Raw, left: number, top: number): void {
  if (left < 0 || top < 0 || left + img.width > canvas.width || top + img.height > canvas.height) return;
  for (let y = 0; y < img.height; y++) {
    img.data.copy(canvas.data, ((top + y) * canvas.width + left) * 3, y * img.width * 3, (y + 1) * img.width * 3);
  }
}

/** Draws the thumbnails as one horizontally centred row. */
function drawReferences(canvas: Raw, thumbs: Raw[], row: ReferenceRow): void {
  const total = thumbs.reduce((sum, t) => sum + t.width, 0) + row.gap * (thumbs.length - 1);
  let left = Math.floor((canvas.width - total) / 2);
  for (const t of thumbs) {
    blit(canvas, t, left, row.rowTop + Math.floor((row.rowH - t.height) / 2));
    left += t.width + row.gap;
  }
}

/** Scales the reduced background up to the output size (nearest neighbour: it is smooth already). */
async function upscale(bg: Raw, width: number, height: number): Promise<Raw> {
  if (bg.width === width && bg.height === height) return bg;
  const sharp = await loadSharp();
  const data = await sharp(bg.data, { raw: { width: bg.width, height: bg.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'nearest' })
    .raw()
    .toBuffer();
  return { data, width, height };
}

function checkSpec(spec: SandboxImageSpec): void {
  for (const side of ['width', 'height'] as const) {
    const v = spec[side];
    if (!Number.isInteger(v) || v < 1 || v > MAX_SANDBOX_IMAGE_SIDE) {
      throw new RangeError(`${side} must be an integer from 1 to ${MAX_SANDBOX_IMAGE_SIDE}, got ${v}`);
    }
  }
  if (spec.format !== 'png' && spec.format !== 'jpeg') throw new RangeError(`unsupported format ${String(spec.format)}`);
}

/**
 * Renders the sandbox picture for `spec` and returns the encoded PNG or JPEG (RGB, no alpha),
 * exactly `spec.width` x `spec.height`. Deterministic: the same spec gives byte-identical output.
 * Rejects with a {@link ReferenceDecodeError} (message naming the index) when a reference cannot be
 * decoded, and with a RangeError for sizes outside 1-4096 or an unknown format.
 */
export async function renderSandboxImage(spec: SandboxImageSpec): Promise<Buffer> {
  checkSpec(spec);
  const { width, height } = spec;
  const refs = spec.references ?? [];
  const margin = Math.round(Math.min(width, height) * 0.04);
  const row = refs.length > 0 ? layoutReferenceRow(refs.length, width, height, margin) : null;
  // Reference decoding runs on libvips threads while the background and text are computed here.
  const thumbs = row ? decodeReferences(refs, row) : Promise.resolve([]);
  const background = upscale(seedGradient(spec.seed, width, height), width, height);
  const done = Promise.all([thumbs, background]);
  const prompt = layoutPrompt(spec.prompt, width, height, margin, height - margin - (row?.reserved ?? 0));
  const [decoded, canvas] = await done;
  if (prompt) drawPanel(canvas, prompt.mask, prompt.left, prompt.top, prompt.pad);
  if (row) drawReferences(canvas, decoded, row);
  const image = (await loadSharp())(canvas.data, { raw: { width, height, channels: 3 } });
  return spec.format === 'png'
    ? image.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer()
    : image.jpeg({ quality: 85, mozjpeg: false }).toBuffer();
}
