/**
 * What a media file really is, read by real parsers: images by their headers (image-size, plus the
 * HEIF brand), video and audio by ffprobe (from @ffprobe-installer/ffprobe). {@link probeFile}
 * reads a file on disk without loading it (review and assets use it): an image's first 512 KiB,
 * a plain MP4/MOV video's `moov` box (mp4-facts.ts), anything else by ffprobe given the path. The facts are checked against a family's limits in media-check.ts.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { imageSize as ImageSize } from 'image-size';
import { createLimiter } from '../limiter.js';
import type { MediaFacts, MediaKind } from './media-facts.js';
import { mp4Facts } from './mp4-facts.js';

/** The file is not a readable medium of the expected kind; the message completes "<field>: ...". */
export class ProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeError';
  }
}

export interface ProbeOptions {
  signal?: AbortSignal;
  /** Where video and audio in memory are written for ffprobe (default: the OS temp folder). */
  tmpDir?: string;
  /** Bound on one ffprobe run, ms (default 20000). */
  timeoutMs?: number;
}

const IMAGE_TYPES: Record<string, string> = { jpg: 'jpeg', png: 'png', webp: 'webp', bmp: 'bmp', tiff: 'tiff', gif: 'gif' };
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis']);
const HEIF_BRANDS = new Set(['mif1', 'msf1']);
const AVIF_BRANDS = new Set(['avif', 'avis']);

/** The HEIF-family format of an ISO-BMFF `ftyp` box: its major brand, else its compatible brands. */
function heifFormatOf(bytes: Buffer): string | undefined {
  if (bytes.length < 16 || bytes.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  const size = Math.min(bytes.readUInt32BE(0), bytes.length);
  const brands = [bytes.toString('latin1', 8, 12)];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(bytes.toString('latin1', at, at + 4));
  if (brands.some((b) => AVIF_BRANDS.has(b))) return 'avif';
  if (brands.some((b) => HEIC_BRANDS.has(b))) return 'heic';
  if (brands.some((b) => HEIF_BRANDS.has(b))) return 'heif';
  return undefined;
}

/** image-size, required on the first image probed (G296): a gateway that reads no image never loads it. */
let imageSize: typeof ImageSize | undefined;

/** Image facts from `bytes` (the whole file, or its head when `fileBytes` gives the file's size). */
export function probeImage(bytes: Buffer, fileBytes = bytes.length): MediaFacts {
  imageSize ??= (createRequire(import.meta.url)('image-size') as { imageSize: typeof ImageSize }).imageSize;
  let size: ReturnType<typeof ImageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    throw new ProbeError('is not a readable image (jpeg, png, webp, bmp, tiff, gif, heic or heif)');
  }
  const format = size.type === 'heif' ? (heifFormatOf(bytes) ?? 'heif') : (IMAGE_TYPES[size.type ?? ''] ?? size.type ?? 'unknown');
  if (!size.width || !size.height) throw new ProbeError(`is a ${format} image without a readable pixel size`);
  return { kind: 'image', format, bytes: fileBytes, width: size.width, height: size.height };
}

/** How much of an image file is read to find its pixel size (image-size's own choice for files). */
export const IMAGE_HEAD_BYTES = 512 * 1024;
/**
 * An image whose size is not within its first {@link IMAGE_HEAD_BYTES} (a TIFF whose directory
 * follows the pixels, a JPEG with that much metadata before its frame header) is read whole if it
 * is at most this large (the contract's largest image limit), by at most 2 at once per process.
 */
export const IMAGE_WHOLE_READ_MAX_BYTES = 30 * 1024 * 1024;
const wholeImageReads = createLimiter(2);

async function readHead(file: string, length: number): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function probeImageFile(file: string, fileBytes: number): Promise<MediaFacts> {
  try {
    return probeImage(await readHead(file, Math.min(fileBytes, IMAGE_HEAD_BYTES)), fileBytes);
  } catch (err) {
    if (!(err instanceof ProbeError) || fileBytes <= IMAGE_HEAD_BYTES || fileBytes > IMAGE_WHOLE_READ_MAX_BYTES) throw err;
  }
  return wholeImageReads.run(async () => probeImage(await fs.promises.readFile(file), fileBytes));
}

let ffprobeBinary: string | undefined;
function ffprobePath(): string {
  ffprobeBinary ??= (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;
  return ffprobeBinary;
}

interface FfprobeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  disposition?: { attached_pic?: number };
}
interface FfprobeOutput {
  format?: { format_name?: string; duration?: string; tags?: { major_brand?: string } };
  streams?: FfprobeStream[];
}

function rate(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const [n, d] = text.split('/').map(Number);
  if (!n || !Number.isFinite(n)) return undefined;
  return d ? n / d : n;
}

function containerFormat(out: FfprobeOutput): string {
  const names = (out.format?.format_name ?? '').split(',');
  if (names.includes('mov') || names.includes('mp4')) return out.format?.tags?.major_brand?.trim() === 'qt' ? 'mov' : 'mp4';
  if (names.includes('wav')) return 'wav';
  if (names.includes('mp3')) return 'mp3';
  return names[0] || 'unknown';
}

async function runFfprobe(file: string, opts: ProbeOptions): Promise<FfprobeOutput> {
  return new Promise((resolve, reject) => {
    execFile(
      ffprobePath(),
      ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
      {
        timeout: opts.timeoutMs ?? 20_000,
        killSignal: 'SIGKILL',
        maxBuffer: 4 * 1024 * 1024,
        ...(opts.signal && { signal: opts.signal }),
      },
      (err, stdout) => {
        if (opts.signal?.aborted) {
          reject(opts.signal.reason);
          return;
        }
        if (err && !stdout) {
          resolve({});
          return;
        } // unreadable: reported by the caller as "not a readable ..."
        try {
          resolve(JSON.parse(stdout) as FfprobeOutput);
        } catch {
          resolve({});
        }
      },
    );
  });
}

/** Video or audio facts of `bytes`, written to a temporary file for ffprobe (MP4s need seeking). */
export async function probeTimed(bytes: Buffer, kind: 'video' | 'audio', opts: ProbeOptions = {}): Promise<MediaFacts> {
  const file = path.join(opts.tmpDir ?? os.tmpdir(), `probe-${randomUUID()}`);
  await fs.promises.writeFile(file, bytes);
  try {
    return await probeTimedFile(file, kind, bytes.length, opts);
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}

/** Video or audio facts, reading `file` itself: a plain MP4/MOV video in process (mp4-facts.ts), else by ffprobe. */
async function probeTimedFile(file: string, kind: 'video' | 'audio', fileBytes: number, opts: ProbeOptions): Promise<MediaFacts> {
  if (kind === 'video') {
    const facts = await mp4Facts(file, fileBytes);
    if (facts) return facts;
  }
  return ffprobeFacts(file, kind, fileBytes, opts);
}

/** Video or audio facts from ffprobe, reading `file` itself. */
export async function ffprobeFacts(file: string, kind: 'video' | 'audio', fileBytes: number, opts: ProbeOptions = {}): Promise<MediaFacts> {
  const out = await runFfprobe(file, opts);
  const streams = out.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const duration = Number(out.format?.duration);
  const expected = kind === 'video' ? 'video (mp4 or mov)' : 'audio file (wav or mp3)';
  if (kind === 'audio' && video) throw new ProbeError('is a video, not an audio file (wav or mp3)');
  if (!out.format || (kind === 'video' ? !video : !audio)) throw new ProbeError(`is not a readable ${expected}`);
  const facts: MediaFacts = { kind, format: containerFormat(out), bytes: fileBytes };
  if (Number.isFinite(duration)) facts.duration = duration;
  if (video) {
    if (video.width) facts.width = video.width;
    if (video.height) facts.height = video.height;
    const fps = rate(video.avg_frame_rate) ?? rate(video.r_frame_rate);
    if (fps !== undefined) facts.fps = fps;
  }
  return facts;
}

/** Facts of a medium in memory expected to be of `kind`; throws ProbeError when it is not one. */
export async function probeMedia(bytes: Buffer, kind: MediaKind, opts: ProbeOptions = {}): Promise<MediaFacts> {
  if (bytes.length === 0) throw new ProbeError('is empty');
  return kind === 'image' ? probeImage(bytes) : probeTimed(bytes, kind, opts);
}

/**
 * Facts of the medium in `file`, expected to be of `kind`, without loading it: images from their
 * head ({@link IMAGE_HEAD_BYTES}), video and audio by ffprobe on the file. Throws ProbeError when
 * it is not one.
 */
export async function probeFile(file: string, kind: MediaKind, opts: ProbeOptions = {}): Promise<MediaFacts> {
  const { size } = await fs.promises.stat(file);
  if (size === 0) throw new ProbeError('is empty');
  return kind === 'image' ? probeImageFile(file, size) : probeTimedFile(file, kind, size, opts);
}
