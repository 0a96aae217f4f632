/**
 * Running the bundled ffmpeg (from @ffmpeg-installer/ffmpeg, a static 4.x build): one process per
 * call with progress reporting and abort support, a process-wide limit on how many run at once,
 * and a registry of live processes so shutdown can kill them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { createLimiter, type Limiter } from '../limiter.js';

/** Options for {@link runFfmpeg}. */
export interface RunFfmpegOptions {
  /** Aborting kills the process (SIGKILL) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Expected output length in seconds; needed to turn ffmpeg's output time into a fraction. */
  durationSec?: number;
  /** Called with a non-decreasing fraction 0..1 while encoding, and with 1 on success. */
  onProgress?: (fraction: number) => void;
}

/** Thrown when ffmpeg exits unsuccessfully; the message ends with the tail of its stderr. */
export class FfmpegError extends Error {
  readonly exitCode: number | null;
  readonly exitSignal: NodeJS.Signals | null;
  readonly stderr: string;

  constructor(exitCode: number | null, exitSignal: NodeJS.Signals | null, stderr: string) {
    const how = exitCode !== null ? `exit code ${exitCode}` : `signal ${exitSignal ?? 'unknown'}`;
    super(`ffmpeg failed (${how})${stderr ? `: ${stderr}` : ''}`);
    this.name = 'FfmpegError';
    this.exitCode = exitCode;
    this.exitSignal = exitSignal;
    this.stderr = stderr;
  }
}

/** Most stderr characters kept for error messages. */
const STDERR_TAIL = 4000;
/** Options every run gets, ahead of the caller's arguments. */
const BASE_ARGS = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-progress', 'pipe:1'];

let cachedPath: string | undefined;

/**
 * The absolute path of the bundled ffmpeg binary. Resolved on first use, so merely importing this
 * module never fails; throws if the package has no binary for this platform.
 */
export function ffmpegPath(): string {
  if (cachedPath === undefined) {
    const require = createRequire(import.meta.url);
    try {
      cachedPath = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    } catch (err) {
      // The package throws plain strings for unsupported platforms.
      const detail = err instanceof Error ? err.message : String(err);
      throw new Error(`ffmpeg is not available: ${detail}`, { cause: err });
    }
  }
  return cachedPath;
}

const live = new Set<ChildProcess>();

/** How many ffmpeg processes started by {@link runFfmpeg} are still running. */
export function liveFfmpegCount(): number {
  return live.size;
}

/** Kills (SIGKILL) every ffmpeg process still running, e.g. on shutdown; returns how many. */
export function killAllFfmpeg(): number {
  let n = 0;
  for (const child of live) {
    if (child.kill('SIGKILL')) n++;
  }
  return n;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Parses `-progress` output lines and reports the time fraction, never going backwards. */
function progressParser(durationSec: number | undefined, onProgress: ((fraction: number) => void) | undefined): (chunk: string) => void {
  let pending = '';
  let last = -1;
  return (chunk) => {
    if (!onProgress || !durationSec || durationSec <= 0) return;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      // ffmpeg 4.x prints microseconds under both names (out_time_ms is misnamed).
      const m = /^out_time_(?:us|ms)=(-?\d+)\s*$/.exec(line);
      if (!m?.[1]) continue;
      const fraction = Math.min(1, Math.max(0, Number(m[1]) / 1e6 / durationSec));
      if (fraction <= last) continue;
      last = fraction;
      try {
        onProgress(fraction);
      } catch {
        // A failing progress callback must not break the run.
      }
    }
  };
}

/**
 * Runs ffmpeg with `args` (after `-nostdin -hide_banner -loglevel error -progress pipe:1`).
 * Resolves when it exits with code 0; rejects with an {@link FfmpegError} carrying the stderr
 * tail otherwise, and with the signal's reason (after SIGKILLing the process) when aborted.
 * Does not take a concurrency slot itself: wrap it in {@link withFfmpegSlot}.
 */
export function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<void> {
  const { signal, durationSec, onProgress } = opts;
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const child = spawn(ffmpegPath(), [...BASE_ARGS, ...args], { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    live.add(child);
    let stderr = '';
    let settled = false;
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    const finish = (err: unknown): void => {
      if (settled) return;
      settled = true;
      live.delete(child);
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) resolve();
      else reject(err);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', progressParser(durationSec, onProgress));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on('error', (err) => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      finish(signal?.aborted ? abortReason(signal) : err);
    });
    child.on('close', (code, sig) => {
      if (signal?.aborted) finish(abortReason(signal));
      else if (code === 0) {
        try {
          onProgress?.(1);
        } catch {
          // Ignored, as above.
        }
        finish(undefined);
      } else finish(new FfmpegError(code, sig, stderr.trim()));
    });
  });
}

/**
 * Process-wide ffmpeg slots: at most the machine's available parallelism at once (FIFO). Its state
 * (`limit`, `active`, `queued`) is what an operator watches; `setLimit` changes it at run time.
 */
export const ffmpegSlots: Limiter = createLimiter(Math.max(1, os.availableParallelism()));

/**
 * Runs `fn` once one of the process-wide ffmpeg slots is free (FIFO), holding the slot until `fn`
 * settles. A call whose `signal` aborts while waiting leaves the queue and rejects with the
 * signal's reason without running `fn`.
 */
export function withFfmpegSlot<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return ffmpegSlots.run(fn, signal);
}
