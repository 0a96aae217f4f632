// One small real MP4 (1 second, 320x240, H.264, yuv420p, faststart) made once per process with the
// bundled ffmpeg, for fakes that serve result files (bench/fake-upstream.js). Made in a temporary
// directory that is removed again; nothing is checked in. The binary is the one src/media/ffmpeg.ts
// runs (@ffmpeg-installer/ffmpeg), resolved here directly so that no build of dist/ is needed.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Seconds of video in the file. */
export const TINY_MP4_SECONDS = 1;

/** @type {Promise<Buffer> | undefined} */
let made;

/** The MP4's bytes (made on first call, then the same buffer). */
export function tinyMp4() {
  made ??= makeTinyMp4();
  return made;
}

async function makeTinyMp4() {
  const ffmpeg = /** @type {{ path: string }} */ (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg')).path;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tiny-mp4-'));
  try {
    const out = path.join(dir, 'tiny.mp4');
    await promisify(execFile)(ffmpeg, [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=320x240:rate=24:duration=${TINY_MP4_SECONDS}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-y',
      out,
    ]);
    return await fs.readFile(out);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
