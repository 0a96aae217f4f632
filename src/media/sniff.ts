/**
 * Media types from magic bytes, for the fetcher's early check (a 30 MB HTML page is refused after
 * its first bytes, not downloaded). The real check is the probe (probe.ts).
 */
import type { MediaKind } from './media-facts.js';

const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs', 'mif1', 'msf1']);
const AVIF_BRANDS = new Set(['avif', 'avis']);
const BMP_DIB_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);
/** ISO-BMFF / QuickTime top-level boxes a video file starts with. */
const MOV_BOXES = new Set(['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

const ascii = (b: Buffer, start: number, end: number): string => b.subarray(start, end).toString('latin1');

/**
 * Sniffs an image type from magic bytes: 'image/png', 'image/jpeg', 'image/webp', 'image/gif',
 * 'image/bmp', 'image/tiff', 'image/heic' (any HEIF still-image brand), 'image/avif', or null.
 */
export function isImageBytes(b: Buffer): string | null {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp';
  if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 18 && ascii(b, 0, 2) === 'BM' && BMP_DIB_SIZES.has(b.readUInt32LE(14))) return 'image/bmp';
  if (b.length >= 4 && (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*')) return 'image/tiff';
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp' && HEIF_BRANDS.has(ascii(b, 8, 12))) return 'image/heic';
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp' && AVIF_BRANDS.has(ascii(b, 8, 12))) return 'image/avif';
  return null;
}

/** 'video/mp4' (MP4 or QuickTime) or null. */
export function isVideoBytes(b: Buffer): string | null {
  if (b.length >= 8 && MOV_BOXES.has(ascii(b, 4, 8)) && !isImageBytes(b)) return 'video/mp4';
  return null;
}

/** 'audio/wav', 'audio/mpeg' or null. */
export function isAudioBytes(b: Buffer): string | null {
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WAVE') return 'audio/wav';
  if (b.length >= 3 && ascii(b, 0, 3) === 'ID3') return 'audio/mpeg';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return 'audio/mpeg';
  return null;
}

/** Whatever the bytes look like, for messages; null when nothing matches. */
export function sniffMediaType(b: Buffer): string | null {
  return isImageBytes(b) ?? isVideoBytes(b) ?? isAudioBytes(b);
}

/** The kind of medium the first bytes begin, or undefined. */
export function sniffMediaKind(first: Buffer): MediaKind | undefined {
  if (isImageBytes(first)) return 'image';
  if (isVideoBytes(first)) return 'video';
  if (isAudioBytes(first)) return 'audio';
  return undefined;
}

/** Whether the first bytes can begin a medium of `kind`. */
export function looksLike(kind: MediaKind, first: Buffer): boolean {
  return (kind === 'image' ? isImageBytes(first) : kind === 'video' ? isVideoBytes(first) : isAudioBytes(first)) !== null;
}
