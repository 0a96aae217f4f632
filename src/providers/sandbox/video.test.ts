import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FfmpegError, ffmpegPath, ffmpegSlots, killAllFfmpeg, liveFfmpegCount, runFfmpeg, withFfmpegSlot } from '../../media/ffmpeg.js';
import { renderSandboxVideo, type SandboxVideoSpec } from './video.js';

interface Probe {
  codec: string;
  width: number;
  height: number;
  fps: number;
  durationSec: number;
  audio: string | null;
  frames: number;
}

function ffmpeg(args: string[]): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(ffmpegPath(), ['-nostdin', '-hide_banner', ...args], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr.toString()}`));
      else resolve({ stdout, stderr: stderr.toString() });
    });
  });
}

/** Stream info from ffmpeg's banner and the decoded frame count (no ffprobe in the bundle). */
async function probe(path: string): Promise<Probe> {
  const { stderr } = await ffmpeg(['-i', path, '-map', '0:v', '-f', 'null', '-']);
  const input = stderr.split('Output #0')[0] ?? '';
  const video = /Video: (\w+).*? (\d{2,5})x(\d{2,5})[ ,].*?, (\d+(?:\.\d+)?) fps/.exec(input);
  const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(input);
  const frames = [...stderr.matchAll(/frame=\s*(\d+)/g)].pop();
  if (!video || !duration || !frames) throw new Error(`unexpected ffmpeg output:\n${stderr}`);
  return {
    codec: video[1] ?? '',
    width: Number(video[2]),
    height: Number(video[3]),
    fps: Number(video[4]),
    durationSec: Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]),
    audio: /Audio: (\w+)/.exec(input)?.[1] ?? null,
    frames: Number(frames[1]),
  };
}

/** Frame `n` decoded as PNG. */
async function frameAt(path: string, n: number): Promise<Buffer> {
  const { stdout } = await ffmpeg(['-loglevel', 'error', '-i', path, '-vf', `select=eq(n\\,${n})`, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', '-']);
  return stdout;
}

/** Mean RGB of the central quarter-width, half-height region. */
async function centreMean(png: Buffer): Promise<[number, number, number]> {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  const region = { left: Math.round(width * 0.375), top: Math.round(height * 0.25), width: Math.round(width * 0.25), height: Math.round(height * 0.5) };
  // stats() reads the input, not the pipeline, so extract into a new image first.
  const { channels } = await sharp(await sharp(png).extract(region).png().toBuffer()).stats();
  return [channels[0]?.mean ?? 0, channels[1]?.mean ?? 0, channels[2]?.mean ?? 0];
}

function solid(width: number, height: number, r: number, g: number, b: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
}

/** ffmpeg processes whose parent is this process, from /proc (Linux only; empty elsewhere). */
function ffmpegChildren(): number[] {
  if (!existsSync('/proc/self/stat')) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
      if (m?.[1] === 'ffmpeg' && Number(m[2]) === process.pid) pids.push(Number(entry));
    } catch {
      // The process went away meanwhile.
    }
  }
  return pids;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let root = '';
const defaultLimit = ffmpegSlots.limit;
let dirs = 0;
const workDir = (): string => join(root, `w${dirs++}`);
const base = { prompt: 'A lighthouse on a cliff at dusk, waves crashing', seed: 'video-test-seed' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mediagate-video-test-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

afterEach(() => {
  ffmpegSlots.setLimit(defaultLimit);
});

describe('renderSandboxVideo', () => {
  it('renders 1280x720 8 s with the first and last frame images, exact size, length and frame count', async () => {
    const red = await solid(640, 480, 255, 0, 0);
    const blue = await solid(300, 500, 0, 0, 255);
    const progress: number[] = [];
    const out = await renderSandboxVideo({
      ...base,
      width: 1280,
      height: 720,
      durationSec: 8,
      audio: false,
      firstFrame: red,
      lastFrame: blue,
      workDir: workDir(),
      onProgress: (f) => progress.push(f),
    });
    expect(out).toMatchObject({ width: 1280, height: 720, durationSec: 8, hasAudio: false });
    const p = await probe(out.path);
    expect(p).toMatchObject({ codec: 'h264', width: 1280, height: 720, fps: 24, durationSec: 8, audio: null, frames: 192 });
    expect(progress.at(-1)).toBe(1);
    expect(progress.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f > (progress[i - 1] ?? 0)))).toBe(true);

    const [r0, g0, b0] = await centreMean(await frameAt(out.path, 0));
    expect(r0).toBeGreaterThan(220);
    expect(g0 + b0).toBeLessThan(40);
    const [rl, gl, bl] = await centreMean(await frameAt(out.path, 191));
    expect(bl).toBeGreaterThan(220);
    expect(rl + gl).toBeLessThan(40);
    // Frames in between show the backdrop, and it moves.
    const f1 = await frameAt(out.path, 1);
    const f190 = await frameAt(out.path, 190);
    const [r1, g1, b1] = await centreMean(f1);
    expect(r1 > 220 && g1 + b1 < 40).toBe(false);
    const a = await sharp(f1).raw().toBuffer();
    const b = await sharp(f190).raw().toBuffer();
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
    expect(diff / a.length).toBeGreaterThan(2);
    expect(readdirSync(join(out.path, '..'))).toEqual(['sandbox-video.mp4']);
  });

  it('renders portrait 720x1280 without audio', async () => {
    const out = await renderSandboxVideo({ ...base, width: 720, height: 1280, durationSec: 2, audio: false, workDir: workDir() });
    expect(await probe(out.path)).toMatchObject({ codec: 'h264', width: 720, height: 1280, fps: 24, durationSec: 2, audio: null, frames: 48 });
  });

  it('renders 854x480 with an AAC track when audio is asked for', async () => {
    const out = await renderSandboxVideo({ ...base, width: 854, height: 480, durationSec: 3, audio: true, workDir: workDir() });
    expect(out.hasAudio).toBe(true);
    expect(await probe(out.path)).toMatchObject({ codec: 'h264', width: 854, height: 480, fps: 24, durationSec: 3, audio: 'aac', frames: 72 });
  });

  it('renders 3840x2160', async () => {
    const out = await renderSandboxVideo({ ...base, width: 3840, height: 2160, durationSec: 1, audio: true, workDir: workDir() });
    expect(await probe(out.path)).toMatchObject({ codec: 'h264', width: 3840, height: 2160, durationSec: 1, audio: 'aac', frames: 24 });
  });

  it('is deterministic: the same spec gives the same bytes', async () => {
    const spec = async (): Promise<SandboxVideoSpec> => ({
      ...base,
      width: 640,
      height: 360,
      durationSec: 2,
      audio: true,
      firstFrame: await solid(64, 64, 0, 255, 0),
      lastFrame: await solid(64, 32, 255, 255, 0),
      references: [await solid(40, 30, 200, 50, 50), await solid(30, 40, 50, 50, 200)],
      workDir: workDir(),
    });
    const [a, b] = await Promise.all([renderSandboxVideo(await spec()), renderSandboxVideo(await spec())]);
    const c = await renderSandboxVideo({ ...(await spec()), seed: 'another seed' });
    const [ba, bb, bc] = await Promise.all([readFile(a.path), readFile(b.path), readFile(c.path)]);
    expect(ba.equals(bb)).toBe(true);
    expect(ba.equals(bc)).toBe(false);
  });

  it('rejects bad sizes, durations and undecodable frame images', async () => {
    const ok = { ...base, width: 640, height: 360, durationSec: 1, audio: false, workDir: workDir() };
    await expect(renderSandboxVideo({ ...ok, width: 641 })).rejects.toThrow(RangeError);
    await expect(renderSandboxVideo({ ...ok, width: 3840, height: 3840 })).rejects.toThrow(RangeError);
    await expect(renderSandboxVideo({ ...ok, durationSec: 31 })).rejects.toThrow(RangeError);
    await expect(renderSandboxVideo({ ...ok, durationSec: 1.01 })).rejects.toThrow(RangeError);
    await expect(renderSandboxVideo({ ...ok, lastFrame: Buffer.from('not an image') })).rejects.toThrow(/lastFrame/);
  });

  it('aborting kills ffmpeg promptly and leaves no child behind', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const run = renderSandboxVideo({ ...base, width: 3840, height: 2160, durationSec: 30, audio: true, workDir: workDir(), signal: controller.signal });
    const settled = run.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    const deadline = Date.now() + 10_000;
    while (liveFfmpegCount() === 0 && Date.now() < deadline) await sleep(10);
    expect(liveFfmpegCount()).toBe(1);
    await sleep(300);
    controller.abort(reason);
    // A 30 s 4K render is far from done: only the kill can settle it now, with the abort's reason.
    expect(await settled).toBe(reason);
    expect(liveFfmpegCount()).toBe(0);
    expect(ffmpegChildren()).toEqual([]);
  });

  it('an abort while waiting for a slot leaves the queue without starting ffmpeg', async () => {
    ffmpegSlots.setLimit(1);
    let release = (): void => undefined;
    const holder = withFfmpegSlot(() => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const run = renderSandboxVideo({ ...base, width: 320, height: 240, durationSec: 1, audio: false, workDir: workDir(), signal: controller.signal });
    const settled = run.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    const deadline = Date.now() + 5000;
    while (ffmpegSlots.queued === 0 && Date.now() < deadline) await sleep(5);
    expect({ limit: ffmpegSlots.limit, active: ffmpegSlots.active, queued: ffmpegSlots.queued }).toMatchObject({ active: 1, queued: 1 });
    controller.abort(new Error('gave up'));
    expect(await settled).toMatchObject({ message: 'gave up' });
    expect({ limit: ffmpegSlots.limit, active: ffmpegSlots.active, queued: ffmpegSlots.queued }).toMatchObject({ active: 1, queued: 0 });
    expect(liveFfmpegCount()).toBe(0);
    release();
    await holder;
    expect({ limit: ffmpegSlots.limit, active: ffmpegSlots.active, queued: ffmpegSlots.queued }).toMatchObject({ active: 0, queued: 0 });
  });
});

describe('ffmpeg helpers', () => {
  it('the limiter never runs more than N at once', async () => {
    ffmpegSlots.setLimit(2);
    let running = 0;
    let peak = 0;
    const task = async (i: number): Promise<number> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(20 + (i % 3) * 10);
      running--;
      return i;
    };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => withFfmpegSlot(() => task(i))));
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(2);

    // With real renders and a limit of 1, at most one ffmpeg process is ever alive.
    ffmpegSlots.setLimit(1);
    let livePeak = 0;
    const timer = setInterval(() => (livePeak = Math.max(livePeak, liveFfmpegCount(), ffmpegChildren().length)), 5);
    try {
      await Promise.all([0, 1, 2].map(() => renderSandboxVideo({ ...base, width: 320, height: 240, durationSec: 1, audio: true, workDir: workDir() })));
    } finally {
      clearInterval(timer);
    }
    expect(livePeak).toBe(1);
    expect({ limit: ffmpegSlots.limit, active: ffmpegSlots.active, queued: ffmpegSlots.queued }).toMatchObject({ limit: 1, active: 0, queued: 0 });
  });

  it('a failing run rejects with the stderr tail', async () => {
    const err = await runFfmpeg(['-i', join(root, 'missing.png'), '-f', 'null', '-']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as FfmpegError).message).toMatch(/missing\.png.*No such file/);
  });

  it('killAllFfmpeg kills running processes', async () => {
    const run = runFfmpeg(['-re', '-f', 'lavfi', '-i', 'color=s=64x64:d=600', '-f', 'null', '-']).catch((e: unknown) => e);
    while (liveFfmpegCount() === 0) await sleep(5);
    await sleep(100);
    expect(killAllFfmpeg()).toBe(1);
    expect(await run).toMatchObject({ exitSignal: 'SIGKILL' });
    expect(liveFfmpegCount()).toBe(0);
  });
});
