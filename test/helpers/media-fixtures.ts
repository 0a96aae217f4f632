/**
 * Real media made inside the tests: images of chosen sizes and formats (sharp; BMP by hand),
 * MP4/MOV videos of chosen size, length and frame rate, WAV and MP3 audio of chosen length
 * (the bundled ffmpeg). Results are cached per process by their parameters.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { ffmpegPath } from '../../src/media/ffmpeg.js';

const cache = new Map<string, Promise<Buffer>>();
const once = (key: string, make: () => Promise<Buffer>): Promise<Buffer> => {
  let p = cache.get(key);
  if (!p) {
    p = make();
    cache.set(key, p);
  }
  return p;
};

export type ImageFixtureFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'tiff' | 'avif' | 'bmp';

/** A 24-bit BMP (sharp cannot write BMP). */
function bmp(width: number, height: number): Buffer {
  const row = Math.ceil((width * 3) / 4) * 4;
  const size = 54 + row * height;
  const b = Buffer.alloc(size, 0x80);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(size, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(width, 18);
  b.writeInt32LE(height, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(row * height, 34);
  return b;
}

export function image(width: number, height: number, format: ImageFixtureFormat = 'png'): Promise<Buffer> {
  return once(`image:${width}x${height}:${format}`, async () => {
    if (format === 'bmp') return bmp(width, height);
    const s = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } });
    return format === 'avif' ? s.avif({ effort: 0 }).toBuffer() : s.toFormat(format).toBuffer();
  });
}

/** What the bundled ffmpeg writes given `args` (inputs, codecs, options; the output file is added), made once per `key`. */
export function ffmpegFixture(key: string, args: string[], ext: string): Promise<Buffer> {
  return once(`ffmpeg:${key}`, () => ffmpeg(args, ext));
}

function ffmpeg(args: string[], ext: string): Promise<Buffer> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fixture-')), `out.${ext}`);
  return new Promise((resolve, reject) => {
    execFile(ffmpegPath(), ['-y', '-hide_banner', '-loglevel', 'error', ...args, out], (err) => {
      if (err) {
        reject(err);
        return;
      }
      resolve(fs.readFileSync(out));
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    });
  });
}

/**
 * An H.264 video of exactly `width` x `height`, `seconds` long at `fps`. Its picture is one flat
 * colour: what reads it (media review, the fake upstreams) looks at its size, length and rate,
 * never at its pixels, and such frames cost a third of the CPU of a drawn test pattern (G418).
 */
export function video(width: number, height: number, seconds: number, fps = 24, format: 'mp4' | 'mov' = 'mp4'): Promise<Buffer> {
  return once(`video:${width}x${height}:${seconds}:${fps}:${format}`, () =>
    ffmpeg(
      [
        '-f',
        'lavfi',
        '-i',
        `color=c=0x3070c0:size=${width}x${height}:rate=${fps}:duration=${seconds}`,
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-f',
        format,
      ],
      format,
    ),
  );
}

export function audio(seconds: number, format: 'wav' | 'mp3' = 'wav'): Promise<Buffer> {
  return once(`audio:${seconds}:${format}`, () =>
    ffmpeg(
      ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, ...(format === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '64k'] : ['-c:a', 'pcm_s16le'])],
      format,
    ),
  );
}

/** A loopback server answering registered paths with bytes; counts every request it gets. */
export interface MediaServer {
  url(p: string): string;
  serve(p: string, body: Buffer, contentType: string): string;
  /** A path that answers headers and then never sends its body. */
  stall(p: string): string;
  requests: Map<string, number>;
  total(): number;
  port: number;
  close(): Promise<void>;
}

export async function startMediaServer(): Promise<MediaServer> {
  const files = new Map<string, { body: Buffer; type: string }>();
  const stalled = new Set<string>();
  const requests = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    requests.set(p, (requests.get(p) ?? 0) + 1);
    if (stalled.has(p)) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100000 });
      res.write(Buffer.alloc(10));
      return;
    }
    const f = files.get(p);
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const url = (p: string): string => `http://127.0.0.1:${port}${p}`;
  return {
    port,
    requests,
    url,
    serve(p, body, contentType) {
      files.set(p, { body, type: contentType });
      return url(p);
    },
    stall(p) {
      stalled.add(p);
      return url(p);
    },
    total: () => [...requests.values()].reduce((a, b) => a + b, 0),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
