import fs from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { FamilyId } from '../src/contract/families.js';
import { mediaRefs } from '../src/contract/media-refs.js';
import type { OutputSpec } from '../src/contract/output.js';
import { createLogger } from '../src/logger.js';
import type { ProducedFile, Provider, ProviderContext, ProviderJob } from '../src/providers/types.js';
import { tempDir } from './helpers/harness.js';
import { probeVideo } from './helpers/probe-video.js';

export function jobFor(output: OutputSpec, params: Record<string, unknown> = { prompt: 'contract' }, family: FamilyId = 'pic'): ProviderJob {
  return { taskId: `task_contract_${Math.random().toString(36).slice(2)}`, family, form: null, model: 'pic', params, output, media: mediaRefs(), attempt: 1 };
}

export function contextFor(signal = new AbortController().signal): ProviderContext & { progress: number[] } {
  const progress: number[] = [];
  return {
    signal, log: createLogger('silent'), workDir: tempDir('provider-contract-'), credentials: {}, progress,
    reportProgress: (p) => { progress.push(p); },
    readMedia: async () => { throw new Error('no media in the contract suite'); },
  };
}

export async function bytesOf(file: ProducedFile): Promise<Buffer> {
  return 'data' in file ? file.data : fs.promises.readFile(file.path);
}

/** What every provider adapter must do; run it from each provider's test file. */
export function runProviderContract(name: string, make: () => Provider): void {
  describe(`provider contract: ${name}`, () => {
    it('makes an image of exactly the size asked for', async () => {
      const out = await make().submit(jobFor({ kind: 'image', width: 640, height: 360, format: 'png' }), contextFor());
      expect(out.files).toHaveLength(1);
      const meta = await sharp(await bytesOf(out.files[0]!)).metadata();
      expect([meta.width, meta.height, meta.format]).toEqual([640, 360, 'png']);
      expect(out.files[0]!.contentType).toBe('image/png');
    });

    it.each([true, false])('makes an H.264 video of the size and length asked for, audio=%s', async (audio) => {
      const out = await make().submit(jobFor({ kind: 'video', width: 640, height: 360, durationSec: 2, fps: 24, audio }, { prompt: 'clip' }, 'clip'), contextFor());
      const file = out.files[0]!;
      expect(file.contentType).toBe('video/mp4');
      const tmp = `${tempDir('probe-')}/v.mp4`;
      fs.writeFileSync(tmp, await bytesOf(file));
      const facts = probeVideo(tmp);
      expect(facts).toMatchObject({ codec: 'h264', width: 640, height: 360, frames: 48, audio: audio ? 'aac' : null });
      expect(facts.durationSec).toBeCloseTo(2, 1);
      expect(out.actualDuration).toBe(2);
    });

    it('stops when its signal is aborted', async () => {
      const controller = new AbortController();
      const pending = make().submit(jobFor({ kind: 'image', width: 64, height: 64, format: 'png' }), contextFor(controller.signal));
      controller.abort(new Error('stop'));
      await expect(pending).rejects.toThrow();
    });

    it('reports a failure the caller asked for as unrecoverable', async () => {
      await expect(make().submit(jobFor({ kind: 'image', width: 64, height: 64, format: 'png' }, { prompt: 'x [fail]' }), contextFor()))
        .rejects.toMatchObject({ name: 'UnrecoverableError' });
    });
  });
}
