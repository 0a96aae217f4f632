import { loadSharp } from '../../media/sharp.js';
import { adaptiveVideoSize } from '../../contract/output.js';
import type { ProviderContext, ProviderJob, ProviderOutput } from '../types.js';
import { UnrecoverableError } from '../types.js';
import { ReferenceDecodeError } from './image.js';
import { fetchAll, renderFailure, seedOf } from './job-inputs.js';
import { renderSandboxVideo, VideoFrameDecodeError } from './video.js';

/**
 * A sandbox video task: fetch the frames and reference images, size the video (an `adaptive` ratio
 * takes the first image's aspect), render a real H.264 MP4 with ffmpeg, progress 60 -> 99 while it
 * encodes. Reference videos and audios are not fetched by the sandbox (they do not change its output).
 */
export async function renderVideoJob(job: ProviderJob, ctx: ProviderContext, prompt: string): Promise<ProviderOutput> {
  const output = job.output;
  if (output.kind !== 'video') throw new Error('not a video job');
  const [firstFrame] = job.media.firstFrame ? await fetchAll([job.media.firstFrame], ctx, 60, 62) : [];
  const [lastFrame] = job.media.lastFrame ? await fetchAll([job.media.lastFrame], ctx, 62, 64) : [];
  const references = await fetchAll(job.media.images, ctx, 64, 68);
  let { width, height } = output;
  const aspectSource = firstFrame ?? references[0];
  if (output.adaptiveResolution && aspectSource) {
    const sharp = await loadSharp();
    const meta = await sharp(aspectSource)
      .metadata()
      .catch(() => undefined);
    if (meta?.width && meta.height) ({ width, height } = adaptiveVideoSize(output.adaptiveResolution, meta.width, meta.height));
  }
  try {
    const video = await renderSandboxVideo({
      width,
      height,
      durationSec: output.durationSec,
      audio: output.audio,
      prompt,
      seed: seedOf(job),
      references,
      workDir: ctx.workDir,
      signal: ctx.signal,
      ...(firstFrame && { firstFrame }),
      ...(lastFrame && { lastFrame }),
      onProgress: (fraction) => ctx.reportProgress(68 + 31 * fraction),
    });
    return {
      files: [{ name: 'video.mp4', contentType: 'video/mp4', path: video.path, width: video.width, height: video.height, duration: video.durationSec }],
      actualDuration: video.durationSec,
    };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (err instanceof RangeError || err instanceof ReferenceDecodeError || err instanceof VideoFrameDecodeError) {
      throw new UnrecoverableError(`sandbox: ${renderFailure(err, job.media)}`, { cause: err });
    }
    throw err;
  }
}
