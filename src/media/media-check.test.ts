import { describe, expect, it } from 'vitest';
import { ASSET_LIMITS, mediaLimitsFor } from '../contract/media-limits.js';
import { checkAudio, checkImage, checkTotals, checkVideo } from './media-check.js';
import type { MediaFacts } from './media-facts.js';

const img = (width: number, height: number, format = 'png', bytes = 1000): MediaFacts => ({ kind: 'image', format, bytes, width, height });
const motion2 = mediaLimitsFor({
  family: 'motion',
  form: null,
  model: 'motion_2_0_4s_5s',
  output: { kind: 'video', width: 1280, height: 720, durationSec: 5, fps: 24, audio: false },
});
const motion15 = mediaLimitsFor({
  family: 'motion',
  form: null,
  model: 'motion_1_5_pro_720p',
  output: { kind: 'video', width: 1280, height: 720, durationSec: 5, fps: 24, audio: false },
});

describe('image limits: open intervals as the contract writes them', () => {
  it.each([
    [img(300, 600), /width and height must be within \(300, 6000\) px/],
    [img(6000, 3000), /width and height must be within \(300, 6000\) px/],
    [img(1000, 400), /aspect ratio 2.5 is outside \(0.4, 2.5\)/],
    [img(400, 1000), /aspect ratio 0.4 is outside \(0.4, 2.5\)/],
    [img(800, 600, 'png', 30 * 1024 * 1024 + 1), /image is 30 MB; the limit is 30 MB/],
    [img(800, 600, 'heic'), /image format heic is not accepted here/],
  ])('%j is refused', (facts, message) => {
    expect(() => checkImage('f[0]', facts, motion2.images)).toThrow(message);
  });

  it.each([img(301, 301), img(5999, 5999), img(999, 400), img(401, 1000), img(800, 600, 'bmp')])('%j passes', (facts) => {
    expect(() => checkImage('f[0]', facts, motion2.images)).not.toThrow();
  });

  it('motion 1.5 pro also takes heic and heif', () => {
    expect(() => checkImage('f', img(800, 600, 'heic'), motion15.images)).not.toThrow();
    expect(() => checkImage('f', img(800, 600, 'heif'), motion15.images)).not.toThrow();
  });
});

describe('video and audio limits', () => {
  const v = (duration: number, fps = 30, width = 1280, height = 720): MediaFacts => ({
    kind: 'video',
    format: 'mp4',
    bytes: 1000,
    width,
    height,
    duration,
    fps,
  });
  it('durations are closed ranges with container rounding tolerated', () => {
    expect(() => checkVideo('v', v(2), ASSET_LIMITS.videos!)).not.toThrow();
    expect(() => checkVideo('v', v(30.04), ASSET_LIMITS.videos!)).not.toThrow();
    expect(() => checkVideo('v', v(1.9), ASSET_LIMITS.videos!)).toThrow(/each must be 2-30 s/);
    expect(() => checkVideo('v', v(5, 23.9), ASSET_LIMITS.videos!)).toThrow(/frame rate 23.9 fps is outside 24-60 fps/);
    expect(() => checkVideo('v', v(5, 60), ASSET_LIMITS.videos!)).not.toThrow();
    expect(() => checkVideo('v', { ...v(5), format: 'webm' }, ASSET_LIMITS.videos!)).toThrow(/video format webm is not accepted here; use mp4 or mov/);
    expect(() => checkAudio('a', { kind: 'audio', format: 'ogg', bytes: 10, duration: 5 }, ASSET_LIMITS.audios!)).toThrow(/audio format ogg/);
  });
  it('totals per field', () => {
    expect(() => checkTotals('reference_videos', 'reference videos', [v(8), v(7)], { totalDuration: 15 })).not.toThrow();
    expect(() => checkTotals('reference_videos', 'reference videos', [v(8), v(7.5)], { totalDuration: 15 })).toThrow(
      'reference_videos: the reference videos last 15.5 s in all; at most 15 s are allowed',
    );
  });
});
