import { spawnSync } from 'node:child_process';
import { ffmpegPath } from '../../src/media/ffmpeg.js';

export interface VideoFacts {
  codec: string;
  width: number;
  height: number;
  durationSec: number;
  frames: number;
  audio: string | null;
}

/** Reads an MP4 with ffmpeg itself (no ffprobe here): codec, size, duration, decoded frame count, audio codec. */
export function probeVideo(file: string): VideoFacts {
  const r = spawnSync(ffmpegPath(), ['-hide_banner', '-i', file, '-map', '0:v', '-f', 'null', '-'], { encoding: 'utf8' });
  const err = r.stderr;
  const video = /Stream #\d+:\d+.*?: Video: (\w+).*?, (\d+)x(\d+)/.exec(err);
  const duration = /Duration: (\d+):(\d+):([\d.]+)/.exec(err);
  const frames = [...err.matchAll(/frame=\s*(\d+)/g)].pop();
  const audio = /Stream #\d+:\d+.*?: Audio: (\w+)/.exec(err);
  if (!video || !duration) throw new Error(`not a video: ${err.slice(0, 500)}`);
  return {
    codec: video[1]!,
    width: Number(video[2]),
    height: Number(video[3]),
    durationSec: Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]),
    frames: frames ? Number(frames[1]) : 0,
    audio: audio ? audio[1]! : null,
  };
}
