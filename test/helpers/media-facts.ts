/**
 * What a produced file really is, read from its bytes by independent tools: the content type from
 * its magic bytes, images through sharp, video and audio through ffprobe (streams, codecs, sizes,
 * frame count). Test-only: nothing here comes from the code under test.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

/** The content type the bytes are, by their signature; undefined when unknown. */
export function sniffContentType(bytes: Buffer): string | undefined {
  const ascii = (from: number, to: number) => bytes.toString('latin1', from, to);
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'GIF8') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (ascii(4, 8) === 'ftyp') return ascii(8, 12) === 'qt  ' ? 'video/quicktime' : 'video/mp4';
  return undefined;
}

export interface ImageFacts {
  format: string;
  width: number;
  height: number;
}

export async function imageFacts(bytes: Buffer): Promise<ImageFacts> {
  const meta = await sharp(bytes).metadata();
  return { format: meta.format ?? 'unknown', width: meta.width ?? 0, height: meta.height ?? 0 };
}

export interface TimedFacts {
  container: string;
  /** Seconds, from the container. */
  durationSec: number;
  video: { codec: string; profile?: string; pixFmt?: string; width: number; height: number; fps: number; frames: number } | null;
  audio: { codec: string; sampleRate: number; channels: number } | null;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  profile?: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  nb_frames?: string;
  nb_read_frames?: string;
  sample_rate?: string;
  channels?: number;
}

const ffprobe = (): string => (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;
const rate = (text = '0/1'): number => {
  const [n = 0, d = 1] = text.split('/').map(Number);
  return d ? n / d : 0;
};

/** ffprobe's view of a video or audio file (frames counted by decoding, not from the header). */
export function timedFacts(bytes: Buffer): TimedFacts {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-facts-'));
  const file = path.join(dir, 'probe.bin');
  fs.writeFileSync(file, bytes);
  try {
    const r = spawnSync(ffprobe(), ['-v', 'error', '-count_frames', '-print_format', 'json', '-show_format', '-show_streams', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (r.status !== 0) throw new Error(`ffprobe could not read the file: ${r.stderr.slice(0, 500)}`);
    const out = JSON.parse(r.stdout) as { format?: { format_name?: string; duration?: string }; streams?: ProbeStream[] };
    const v = out.streams?.find((s) => s.codec_type === 'video');
    const a = out.streams?.find((s) => s.codec_type === 'audio');
    return {
      container: out.format?.format_name ?? 'unknown',
      durationSec: Number(out.format?.duration ?? Number.NaN),
      video: v
        ? {
            codec: v.codec_name ?? 'unknown',
            ...(v.profile && { profile: v.profile }),
            ...(v.pix_fmt && { pixFmt: v.pix_fmt }),
            width: v.width ?? 0,
            height: v.height ?? 0,
            fps: rate(v.avg_frame_rate),
            frames: Number(v.nb_read_frames ?? v.nb_frames ?? 0),
          }
        : null,
      audio: a ? { codec: a.codec_name ?? 'unknown', sampleRate: Number(a.sample_rate ?? 0), channels: a.channels ?? 0 } : null,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
