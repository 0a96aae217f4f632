/**
 * Video facts of a plain MP4/MOV file read in process from its `moov` box (G161): the
 * container (`ftyp` brand), the duration (the longest track, its edit list honoured as ffprobe
 * does), and of the first video track its coded pixel size (the `stsd` sample entry, what ffprobe
 * reports as width/height) and frame rate (samples per second of the track, from `stts` and
 * `mdhd`: ffprobe's `avg_frame_rate`). Spawning ffprobe costs tens of milliseconds of CPU per
 * file; re-hosting thousands of upstream results a minute made it the gateway's largest cost
 * (BENCHMARKS.md, bench:relay).
 *
 * Only what it can read with certainty is answered: a fragmented file (`mvex`, `moof`), a `moov`
 * over {@link MP4_MOOV_MAX_BYTES}, a codec it does not know, a zero or missing duration, an edit
 * list of other than one edit, or any box that does not add up answers `undefined`, and the
 * caller asks ffprobe instead.
 */
import fs from 'node:fs';
import type { MediaFacts } from './media-facts.js';

/** The largest `moov` box read in process (a 2-hour video's index is a few MB). */
export const MP4_MOOV_MAX_BYTES = 16 * 1024 * 1024;
/** Top-level boxes looked at before giving up on finding `moov`. */
const MAX_TOP_LEVEL_BOXES = 64;

/** Video sample entry types whose files ffprobe reads as video (H.264, H.265, AV1, VP9, MPEG-4, ProRes, ...). */
const VIDEO_CODECS = new Set(['avc1', 'avc3', 'hvc1', 'hev1', 'av01', 'vp09', 'vp08', 'mp4v', 'apch', 'apcn', 'apcs', 'apco', 'ap4h', 'jpeg', 'mjpa', 'mjpb']);

interface Box {
  type: string;
  start: number;
  end: number;
  body: number;
}

/** The boxes in `buf` between `from` and `to`; undefined when one overruns. */
function boxesIn(buf: Buffer, from: number, to: number): Box[] | undefined {
  const boxes: Box[] = [];
  for (let at = from; at < to; ) {
    if (at + 8 > to) return undefined;
    let size = buf.readUInt32BE(at);
    let body = at + 8;
    if (size === 1) {
      if (at + 16 > to) return undefined;
      size = Number(buf.readBigUInt64BE(at + 8));
      body = at + 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < body - at || at + size > to) return undefined;
    boxes.push({ type: buf.toString('latin1', at + 4, at + 8), start: at, end: at + size, body });
    at += size;
  }
  return boxes;
}

const child = (buf: Buffer, box: Box, type: string): Box | undefined => boxesIn(buf, box.body, box.end)?.find((b) => b.type === type);

/** `timescale` and `duration` of an `mvhd` or `mdhd` box (versions 0 and 1). */
function timing(buf: Buffer, box: Box): { timescale: number; duration: number } | undefined {
  const version = buf[box.body];
  const need = version === 1 ? 4 + 16 + 4 + 8 : 4 + 8 + 4 + 4;
  if (box.body + need > box.end) return undefined;
  if (version === 1) return { timescale: buf.readUInt32BE(box.body + 20), duration: Number(buf.readBigUInt64BE(box.body + 24)) };
  return { timescale: buf.readUInt32BE(box.body + 12), duration: buf.readUInt32BE(box.body + 16) };
}

interface Track {
  /** Seconds the track plays: its one edit's length (ffprobe honours edit lists), else its media's. */
  duration: number;
  video?: { codec: string; width: number; height: number; fps: number };
}

/**
 * The seconds of a track's one edit (movie timescale), or of its media when it has no edit list;
 * undefined for anything else (empty edits delay the start, several edits cut the media: ffprobe).
 */
function playedSeconds(buf: Buffer, trak: Box, media: { timescale: number; duration: number }, movieTimescale: number): number | undefined {
  const edts = child(buf, trak, 'edts');
  if (!edts) return media.duration / media.timescale;
  const elst = child(buf, edts, 'elst');
  if (!elst || elst.body + 8 > elst.end || buf.readUInt32BE(elst.body + 4) !== 1) return undefined;
  const version = buf[elst.body];
  const entry = elst.body + 8;
  if (entry + (version === 1 ? 20 : 12) > elst.end) return undefined;
  const segment = version === 1 ? Number(buf.readBigUInt64BE(entry)) : buf.readUInt32BE(entry);
  const mediaTime = version === 1 ? buf.readBigInt64BE(entry + 8) : BigInt(buf.readInt32BE(entry + 4));
  return mediaTime < 0n ? undefined : segment / movieTimescale;
}

/** The facts of one `trak`: its played length and, for a video track, its picture; undefined when unreadable. */
function trackOf(buf: Buffer, trak: Box, movieTimescale: number): Track | undefined {
  const mdia = child(buf, trak, 'mdia');
  const hdlr = mdia && child(buf, mdia, 'hdlr');
  const mdhd = mdia && child(buf, mdia, 'mdhd');
  const media = mdhd && timing(buf, mdhd);
  if (!mdia || !hdlr || hdlr.body + 12 > hdlr.end || !media?.timescale) return undefined;
  const duration = playedSeconds(buf, trak, media, movieTimescale);
  if (duration === undefined) return undefined;
  if (buf.toString('latin1', hdlr.body + 8, hdlr.body + 12) !== 'vide') return { duration };
  const minf = child(buf, mdia, 'minf');
  const stbl = minf && child(buf, minf, 'stbl');
  const stsd = stbl && child(buf, stbl, 'stsd');
  const stts = stbl && child(buf, stbl, 'stts');
  if (!stsd || !stts) return undefined;
  // the first sample entry: header (8), SampleEntry (8), VisualSampleEntry's pre-defined and reserved (16), width, height
  const entry = stsd.body + 8;
  if (entry + 36 > stsd.end || buf.readUInt32BE(stsd.body + 4) < 1) return undefined;
  const codec = buf.toString('latin1', entry + 4, entry + 8);
  const width = buf.readUInt16BE(entry + 32);
  const height = buf.readUInt16BE(entry + 34);
  const entries = stts.body + 8 <= stts.end ? buf.readUInt32BE(stts.body + 4) : -1;
  if (entries < 1 || stts.body + 8 + 8 * entries > stts.end) return undefined;
  let samples = 0;
  let ticks = 0;
  for (let i = 0; i < entries; i++) {
    const count = buf.readUInt32BE(stts.body + 8 + 8 * i);
    samples += count;
    ticks += count * buf.readUInt32BE(stts.body + 12 + 8 * i);
  }
  if (!width || !height || !samples || !ticks) return undefined;
  return { duration, video: { codec, width, height, fps: (samples * media.timescale) / ticks } };
}

async function readAt(handle: fs.promises.FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** The top-level `ftyp` brand and `moov` box of the file; undefined when either is missing or the file is fragmented. */
async function topLevel(handle: fs.promises.FileHandle, fileBytes: number): Promise<{ brand: string; moov: Buffer } | undefined> {
  let brand: string | undefined;
  for (let at = 0, seen = 0; at + 8 <= fileBytes && seen < MAX_TOP_LEVEL_BOXES; seen++) {
    const head = await readAt(handle, at, 16);
    if (head.length < 8) return undefined;
    const type = head.toString('latin1', 4, 8);
    let size = head.readUInt32BE(0);
    if (size === 1) size = head.length >= 16 ? Number(head.readBigUInt64BE(8)) : 0;
    else if (size === 0) size = fileBytes - at;
    if (size < 8 || at + size > fileBytes) return undefined;
    if (seen === 0) {
      if (type !== 'ftyp' || head.length < 12) return undefined;
      brand = head.toString('latin1', 8, 12);
    }
    if (type === 'moof') return undefined;
    if (type === 'moov') {
      if (size > MP4_MOOV_MAX_BYTES || brand === undefined) return undefined;
      const moov = await readAt(handle, at, size);
      return moov.length === size ? { brand, moov } : undefined;
    }
    at += size;
  }
  return undefined;
}

/** Facts of the MP4/MOV at `file` (`fileBytes` long) with a video track; undefined when ffprobe must tell. */
export async function mp4Facts(file: string, fileBytes: number): Promise<MediaFacts | undefined> {
  const handle = await fs.promises.open(file, 'r');
  let top: Awaited<ReturnType<typeof topLevel>>;
  try {
    top = await topLevel(handle, fileBytes);
  } finally {
    await handle.close();
  }
  if (!top) return undefined;
  const { moov, brand } = top;
  const boxes = boxesIn(moov, 8, moov.length);
  const mvhd = boxes?.find((b) => b.type === 'mvhd');
  const movie = mvhd && timing(moov, mvhd);
  if (!boxes || !movie?.timescale || !movie.duration || boxes.some((b) => b.type === 'mvex')) return undefined;
  let video: Track['video'];
  let duration = 0;
  for (const trak of boxes.filter((b) => b.type === 'trak')) {
    const track = trackOf(moov, trak, movie.timescale);
    if (track === undefined) return undefined;
    duration = Math.max(duration, track.duration);
    video ??= track.video;
  }
  if (!video || !VIDEO_CODECS.has(video.codec)) return undefined;
  return {
    kind: 'video',
    format: brand === 'qt  ' ? 'mov' : 'mp4',
    bytes: fileBytes,
    duration,
    width: video.width,
    height: video.height,
    fps: video.fps,
  };
}
