import { ChildProcess } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import type { OutputSpec } from '../../../src/contract/output.js';
import { createLogger } from '../../../src/logger.js';
import { createSandboxProvider } from '../../../src/providers/sandbox/index.js';
import { UnrecoverableError, type ProviderContext } from '../../../src/providers/types.js';
import { imageFacts, timedFacts } from '../../helpers/media-facts.js';
import { tempDir } from '../../helpers/temp-root.js';
import { bytesOf, jobFor, runProviderContract, runToOutput } from '../../cases/provider-contract.case.js';

const image = (width: number, height: number, format: 'png' | 'jpeg' = 'png'): OutputSpec => ({ kind: 'image', width, height, format });
const video = (width: number, height: number, durationSec: number, audio: boolean): OutputSpec => ({
  kind: 'video',
  width,
  height,
  durationSec,
  fps: 24,
  audio,
});

// (a) the rules every provider follows, at the default (`fast`) timing: an image waits ~0.8 s, long
// enough to abort, reporting progress as it waits. The video is made at `instant` timing: the wait
// before it would be the same code as the image's, only longer (2 s), and its rendering is what that
// job is there for (G276).
runProviderContract('sandbox (fast timing)', {
  make: () => createSandboxProvider({ timing: 'fast' }),
  jobs: [
    { name: 'pic image', job: () => jobFor(image(640, 360)) },
    {
      name: 'clip video with audio (instant timing)',
      job: () => jobFor(video(640, 360, 2, true), { prompt: 'a paper boat' }, 'clip'),
      make: () => createSandboxProvider({ timing: 'instant' }),
    },
  ],
  longJob: () => jobFor(image(64, 64)),
  unrecoverableJob: () => jobFor(image(64, 64), { prompt: 'x [fail]' }),
});

// (b) what the sandbox promises beyond that (D19, G6, G12, G13), at `instant` timing.
const sandbox = () => createSandboxProvider({ timing: 'instant' });
function context(signal = new AbortController().signal): ProviderContext & { progress: number[] } {
  const progress: number[] = [];
  return {
    signal,
    log: createLogger('silent'),
    workDir: tempDir('sandbox-provider-'),
    progress,
    reportProgress: (p) => {
      progress.push(p);
    },
    readMedia: async () => {
      throw new Error('no caller media here');
    },
    mediaUrl: (ref) => ref.url,
  };
}

describe('sandbox provider: exact media', () => {
  it.each([
    { width: 640, height: 360, format: 'png' as const, contentType: 'image/png' },
    { width: 1024, height: 439, format: 'png' as const, contentType: 'image/png' }, // 21:9 at 1k (G6)
    { width: 439, height: 1024, format: 'jpeg' as const, contentType: 'image/jpeg' },
    { width: 1, height: 1, format: 'png' as const, contentType: 'image/png' },
  ])('image $width x $height $format', async ({ width, height, format, contentType }) => {
    const out = await runToOutput(sandbox(), jobFor(image(width, height, format)), context());
    expect(out.files).toHaveLength(1);
    const file = out.files[0]!;
    expect(file).toMatchObject({ contentType, width, height });
    expect(await imageFacts(await bytesOf(file))).toEqual({ format, width, height });
  });

  it.each([
    { width: 640, height: 360, durationSec: 2, audio: true },
    { width: 640, height: 360, durationSec: 2, audio: false },
    { width: 360, height: 640, durationSec: 1, audio: false },
  ])(
    'video $width x $height, $durationSec s, audio=$audio: H.264 (yuv420p) MP4 at 24 fps, AAC exactly when asked',
    async ({ width, height, durationSec, audio }) => {
      const out = await runToOutput(sandbox(), jobFor(video(width, height, durationSec, audio), { prompt: 'clip' }, 'clip'), context());
      expect(out.files).toHaveLength(1);
      const file = out.files[0]!;
      expect(file).toMatchObject({ contentType: 'video/mp4', width, height, duration: durationSec });
      expect(out.actualDuration).toBe(durationSec);
      const facts = timedFacts(await bytesOf(file));
      expect(facts.container).toContain('mp4');
      expect(facts.video).toEqual({ codec: 'h264', profile: expect.any(String), pixFmt: 'yuv420p', width, height, fps: 24, frames: 24 * durationSec });
      expect(facts.audio).toEqual(audio ? { codec: 'aac', sampleRate: 48_000, channels: 1 } : null);
      expect(Math.abs(facts.durationSec - durationSec)).toBeLessThanOrEqual(0.05);
    },
  );

  it('the same job gives the same bytes; another prompt other bytes (G12)', async () => {
    const job = jobFor(image(320, 240), { prompt: 'same' });
    const a = await bytesOf((await runToOutput(sandbox(), job, context())).files[0]!);
    const b = await bytesOf((await runToOutput(sandbox(), { ...job, taskId: 'task_other', attempt: 2 }, context())).files[0]!);
    const c = await bytesOf((await runToOutput(sandbox(), jobFor(image(320, 240), { prompt: 'different' }), context())).files[0]!);
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(false);
  });
});

describe('sandbox provider: prompt markers (G13)', () => {
  const FAIL_MESSAGE = 'sandbox: the prompt contains [fail], so this task fails on purpose';

  it.each([
    ['pic prompt', jobFor(image(64, 64), { prompt: 'a cat [fail]' })],
    ['motion text content', jobFor(video(640, 360, 1, false), { content: [{ type: 'text', text: '[fail] a dog' }] }, 'motion')],
    ['on a retry as well', jobFor(image(64, 64), { prompt: '[fail]' }, 'pic', 3)],
  ])('[fail] in the %s fails at once, unrecoverably, with the documented message', async (_name, job) => {
    const ctx = context();
    const err = await sandbox()
      .start(job, ctx)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toBe(FAIL_MESSAGE);
    expect(ctx.progress).toEqual([]);
  });

  it('[flaky] fails the first attempt with a retryable error and completes on the second', async () => {
    const first = jobFor(image(64, 64), { prompt: 'a [flaky] bird' });
    const err = await runToOutput(sandbox(), first, context()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toMatch(/\[flaky\]/);
    const out = await runToOutput(sandbox(), { ...first, attempt: 2 }, context());
    expect(await imageFacts(await bytesOf(out.files[0]!))).toEqual({ format: 'png', width: 64, height: 64 });
  });
});

describe('sandbox provider: abort while encoding', () => {
  it('an abort during the ffmpeg encode rejects with the reason at once', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled while encoding');
    const ctx = context(controller.signal);
    const report = ctx.reportProgress;
    ctx.reportProgress = (p) => {
      report(p);
      if (p > 68) controller.abort(reason);
    }; // 68-99: encoding (video-job.ts)
    // which processes were sent which signal, and how many of them by the time the job rejected
    const kill = vi.spyOn(ChildProcess.prototype, 'kill');
    let killsWhenRejected = -1;
    try {
      const err = await sandbox()
        .start(jobFor(video(1280, 720, 30, true), { prompt: 'long' }, 'clip'), ctx)
        .then(
          () => undefined,
          (e: unknown) => {
            killsWhenRejected = kill.mock.calls.length;
            return e;
          },
        );
      expect(controller.signal.aborted).toBe(true);
      expect(err).toBe(reason);
      // at once: ffmpeg had been killed by the time the job rejected, not left to encode 30 s of video
      const ffmpegKills = kill.mock.calls.filter((_call, i) => /ffmpeg/.test((kill.mock.contexts[i] as ChildProcess).spawnfile));
      expect(ffmpegKills).toEqual([['SIGKILL']]);
      expect(killsWhenRejected).toBeGreaterThanOrEqual(1);
    } finally {
      kill.mockRestore();
    }
  });
});
