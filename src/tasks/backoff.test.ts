import { describe, expect, it } from 'vitest';
import { FfmpegError } from '../media/ffmpeg.js';
import { UnrecoverableError } from '../providers/types.js';
import { retryDelayMs, serverFaultDelayMs, serverFaultOf } from './backoff.js';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: something`), { code });

describe("the gateway's own faults (G84)", () => {
  it.each(['EMFILE', 'ENFILE', 'ENOSPC', 'EDQUOT', 'ENOMEM', 'EAGAIN', 'EROFS', 'EIO'])('%s is one', (code) => {
    expect(serverFaultOf(errno(code))).toBe(code);
  });

  it("also when wrapped (a provider's UnrecoverableError around it) or only in a tool's stderr", () => {
    expect(serverFaultOf(new UnrecoverableError('sandbox: could not write', { cause: errno('ENOSPC') }))).toBe('ENOSPC');
    expect(serverFaultOf(new FfmpegError(1, null, 'out.mp4: No space left on device'))).toBe('ENOSPC');
    expect(serverFaultOf(new Error('pipe: Too many open files'))).toBe('EMFILE');
  });

  it("the task's own failures are not", () => {
    for (const err of [new UnrecoverableError('sandbox: [fail]'), errno('ENOENT'), errno('ECONNREFUSED'), new Error('bad prompt'), 'text', undefined]) {
      expect(serverFaultOf(err)).toBeUndefined();
    }
  });

  it('pauses grow from 2 s to at most 60 s', () => {
    expect([1, 2, 3, 5, 6, 20].map(serverFaultDelayMs)).toEqual([2000, 4000, 8000, 32_000, 60_000, 60_000]);
  });
});

describe('retries of failed attempts', () => {
  it('wait ~1 s, 2 s, 4 s ... at most 60 s, give or take a quarter (the jitter)', () => {
    expect([1, 2, 3, 7, 8, 20].map((n) => retryDelayMs(n, () => 0.5))).toEqual([1000, 2000, 4000, 60_000, 60_000, 60_000]);
    expect([retryDelayMs(1, () => 0), retryDelayMs(1, () => 1)]).toEqual([750, 1250]);
  });
});
