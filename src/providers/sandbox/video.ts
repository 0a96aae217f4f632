/**
 * The sandbox provider's video renderer: a real H.264/AAC MP4 made from the request itself. The
 * backdrop is the sandbox still image (seed gradient, prompt, reference thumbnails) rendered a
 * little larger than the frame, slowly panned; a progress marker slides along the bottom; the
 * optional first/last-frame images are the exact first and last frames; the optional audio is a
 * seed-derived tone. The same spec always gives the same bytes.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSharp } from '../../media/sharp.js';
import { runFfmpeg, withFfmpegSlot } from '../../media/ffmpeg.js';
import { MAX_SANDBOX_IMAGE_SIDE, renderSandboxImage } from './image.js';

/** What to render. */
export interface SandboxVideoSpec {
  /** Exact output width: an even number, 16 to 3840 (and width x height at most 3840 x 2160 pixels). */
  width: number;
  /** Exact output height: an even number, 16 to 3840. */
  height: number;
  /** Exact length in seconds, 1 to 30, a whole number of frames at {@link SANDBOX_VIDEO_FPS}. */
  durationSec: number;
  /** An AAC track (a seed-derived tone) exactly when true; no audio track when false. */
  audio: boolean;
  /** Drawn on the backdrop. */
  prompt: string;
  /** Any string; the backdrop and letterbox colours and the tone derive from a hash of it. */
  seed: string;
  /** Encoded image shown as the first frame, fitted inside the frame on the seed colour. */
  firstFrame?: Buffer;
  /** Encoded image shown as the last frame, fitted inside the frame on the seed colour. */
  lastFrame?: Buffer;
  /** Encoded images shown as thumbnails on the backdrop. */
  references?: Buffer[];
  /** Scratch folder (created if missing); the MP4 is left here, intermediate files are removed. */
  workDir: string;
  /** Aborting stops the render (ffmpeg is killed) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called with a fraction 0..1 while encoding. */
  onProgress?: (fraction: number) => void;
}

/** What {@link renderSandboxVideo} produced. */
export interface SandboxVideoResult {
  /** The MP4 file, inside `workDir`. */
  path: string;
  width: number;
  height: number;
  durationSec: number;
  hasAudio: boolean;
}

/** Frame rate of every sandbox video. */
export const SANDBOX_VIDEO_FPS = 24;
/** Largest accepted side. */
export const MAX_SANDBOX_VIDEO_SIDE = 3840;
/** Largest accepted pixel count (3840 x 2160). */
export const MAX_SANDBOX_VIDEO_PIXELS = 3840 * 2160;

/** Thrown when `firstFrame` or `lastFrame` cannot be decoded. */
export class VideoFrameDecodeError extends Error {
  readonly which: 'firstFrame' | 'lastFrame';
  /** What the decoder said. */
  readonly detail: string;

  constructor(which: 'firstFrame' | 'lastFrame', cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`${which} image could not be decoded: ${detail}`, { cause });
    this.name = 'VideoFrameDecodeError';
    this.which = which;
    this.detail = detail;
  }
}

/** Share of each side the backdrop is larger than the frame, panned across over the video. */
const PAN = 0.04;
/** Fixed encoder threads, so the bytes do not depend on the machine. */
const ENCODER_THREADS = '2';
const OUTPUT_NAME = 'sandbox-video.mp4';

interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** The seed's letterbox colour (dark, saturated enough to tell apart) and tone frequency in Hz. */
function seedTraits(seed: string): { colour: Rgb; toneHz: number } {
  const h = createHash('sha256').update(`mediagate-sandbox-video\0${seed}`).digest();
  const channel = (i: number): number => 16 + ((h[i] ?? 0) % 96);
  return { colour: { r: channel(0), g: channel(1), b: channel(2) }, toneHz: 220 + (h.readUInt16BE(3) % 441) };
}

function frameCount(spec: SandboxVideoSpec): number {
  const { width, height, durationSec } = spec;
  for (const [name, v] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isInteger(v) || v < 16 || v > MAX_SANDBOX_VIDEO_SIDE || v % 2 !== 0) {
      throw new RangeError(`${name} must be an even integer from 16 to ${MAX_SANDBOX_VIDEO_SIDE}, got ${v}`);
    }
  }
  if (width * height > MAX_SANDBOX_VIDEO_PIXELS) throw new RangeError(`${width}x${height} is larger than 3840x2160`);
  const frames = Math.round(durationSec * SANDBOX_VIDEO_FPS);
  if (!Number.isFinite(durationSec) || durationSec < 1 || durationSec > 30 || Math.abs(frames - durationSec * SANDBOX_VIDEO_FPS) > 1e-6) {
    throw new RangeError(`durationSec must be 1 to 30 and a whole number of 1/${SANDBOX_VIDEO_FPS} s frames, got ${durationSec}`);
  }
  return frames;
}

/** Decodes `image` and writes it fitted inside width x height on `colour` as a PNG at `path`. */
async function writeStill(which: 'firstFrame' | 'lastFrame', image: Buffer, width: number, height: number, colour: Rgb, path: string): Promise<void> {
  let png: Buffer;
  const sharp = await loadSharp();
  try {
    png = await sharp(image)
      .rotate()
      .flatten({ background: colour })
      .resize(width, height, { fit: 'contain', background: { ...colour, alpha: 1 } })
      .toColourspace('srgb')
      .removeAlpha()
      .png({ compressionLevel: 1, adaptiveFiltering: false })
      .toBuffer();
  } catch (err) {
    throw new VideoFrameDecodeError(which, err);
  }
  await writeFile(path, png);
}

const even = (v: number): number => Math.max(0, 2 * Math.floor(v / 2));

interface Plan {
  backdrop: string;
  first?: string;
  last?: string;
  output: string;
}

/** The ffmpeg arguments for `spec` (frames = duration x fps), reading the files named in `plan`. */
function ffmpegArgs(spec: SandboxVideoSpec, frames: number, plan: Plan, toneHz: number): string[] {
  const { width: w, height: h, durationSec } = spec;
  const lastT = ((frames - 1) / SANDBOX_VIDEO_FPS).toFixed(6);
  const inputs = ['-framerate', String(SANDBOX_VIDEO_FPS), '-i', plan.backdrop];
  const barH = Math.max(2, even(h * 0.012));
  const barY = h - barH - Math.max(2, even(h * 0.012));
  const markW = Math.max(4, even(w * 0.04));
  const graph = [
    `[0:v]format=yuv420p,loop=loop=-1:size=1:start=0,setpts=N/${SANDBOX_VIDEO_FPS}/TB,` +
      `crop=w=${w}:h=${h}:x='(iw-ow)*t/${lastT}':y='(ih-oh)*t/${lastT}',` +
      `drawbox=x=0:y=${barY}:w=${w}:h=${barH}:color=black@0.45:t=fill[bg]`,
    `color=c=white:s=${markW}x${barH}:r=${SANDBOX_VIDEO_FPS}[mark]`,
    `[bg][mark]overlay=x='(W-w)*t/${lastT}':y=${barY}:eval=frame[v0]`,
  ];
  let out = 'v0';
  let next = 1;
  if (plan.first) {
    inputs.push('-i', plan.first);
    // Frame 0 is at t=0; the next frame is at 1/24 s.
    graph.push(`[${next}:v]format=yuv420p[first]`, `[${out}][first]overlay=enable='lt(t,${(0.5 / SANDBOX_VIDEO_FPS).toFixed(6)})'[v1]`);
    out = 'v1';
    next++;
  }
  if (plan.last) {
    inputs.push('-i', plan.last);
    graph.push(`[${next}:v]format=yuv420p[last]`, `[${out}][last]overlay=enable='gte(t,${((frames - 1.5) / SANDBOX_VIDEO_FPS).toFixed(6)})'[v2]`);
    out = 'v2';
    next++;
  }
  const audio: string[] = [];
  if (spec.audio) {
    inputs.push('-f', 'lavfi', '-i', `sine=frequency=${toneHz}:beep_factor=2:sample_rate=48000:duration=${durationSec}`);
    audio.push('-map', `${next}:a`, '-c:a', 'aac', '-b:a', '96k', '-ac', '1', '-flags:a', '+bitexact');
  }
  return [
    '-y',
    ...inputs,
    '-filter_complex',
    graph.join(';'),
    '-map',
    `[${out}]`,
    '-frames:v',
    String(frames),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '30',
    '-g',
    String(5 * SANDBOX_VIDEO_FPS),
    '-pix_fmt',
    'yuv420p',
    '-threads',
    ENCODER_THREADS,
    '-flags:v',
    '+bitexact',
    ...audio,
    '-fflags',
    '+bitexact',
    '-map_metadata',
    '-1',
    '-movflags',
    '+faststart',
    plan.output,
  ];
}

/**
 * Renders the sandbox video for `spec` into `spec.workDir` and returns where it is and what it
 * is: H.264 (yuv420p) MP4 at 24 fps, exactly `durationSec * 24` frames of `width` x `height`, with
 * an AAC track exactly when `audio`. Deterministic: the same spec gives byte-identical files.
 * Rejects with a RangeError for an unsupported size or duration, a ReferenceDecodeError or
 * {@link VideoFrameDecodeError} for undecodable images, an FfmpegError if encoding fails, and the
 * signal's reason when aborted. Encoding waits for a process-wide ffmpeg slot.
 */
export async function renderSandboxVideo(spec: SandboxVideoSpec): Promise<SandboxVideoResult> {
  const frames = frameCount(spec);
  const { width, height, signal } = spec;
  signal?.throwIfAborted();
  await mkdir(spec.workDir, { recursive: true });
  const { colour, toneHz } = seedTraits(spec.seed);
  const plan: Plan = { backdrop: join(spec.workDir, 'sandbox-video-backdrop.png'), output: join(spec.workDir, OUTPUT_NAME) };
  if (spec.firstFrame) plan.first = join(spec.workDir, 'sandbox-video-first.png');
  if (spec.lastFrame) plan.last = join(spec.workDir, 'sandbox-video-last.png');
  const scratch = [plan.backdrop, plan.first, plan.last].filter((p): p is string => p !== undefined);
  try {
    const padW = even(Math.min(width * PAN, MAX_SANDBOX_IMAGE_SIDE - width));
    const padH = even(Math.min(height * PAN, MAX_SANDBOX_IMAGE_SIDE - height));
    const prepared = await Promise.allSettled([
      renderSandboxImage({
        width: width + padW,
        height: height + padH,
        prompt: spec.prompt,
        seed: spec.seed,
        references: spec.references ?? [],
        format: 'png',
      }).then((png) => writeFile(plan.backdrop, png)),
      spec.firstFrame && plan.first ? writeStill('firstFrame', spec.firstFrame, width, height, colour, plan.first) : undefined,
      spec.lastFrame && plan.last ? writeStill('lastFrame', spec.lastFrame, width, height, colour, plan.last) : undefined,
    ]);
    for (const p of prepared) if (p.status === 'rejected') throw p.reason;
    signal?.throwIfAborted();
    const args = ffmpegArgs(spec, frames, plan, toneHz);
    await withFfmpegSlot(() => runFfmpeg(args, { signal, durationSec: spec.durationSec, onProgress: spec.onProgress }), signal);
  } catch (err) {
    await rm(plan.output, { force: true });
    throw err;
  } finally {
    await Promise.all(scratch.map((p) => rm(p, { force: true })));
  }
  return { path: plan.output, width, height, durationSec: spec.durationSec, hasAudio: spec.audio };
}
