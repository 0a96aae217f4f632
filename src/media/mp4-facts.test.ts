import { describe, expect, it } from 'vitest';
import { filesOnDisk } from '../../test/helpers/files-on-disk.js';
import { ffmpegFixture, video } from '../../test/helpers/media-fixtures.js';
import { mp4Facts } from './mp4-facts.js';
import { ffprobeFacts } from './probe.js';

const { onDisk } = filesOnDisk('mg-mp4-facts-');

const testsrc = (size: string, rate: string, seconds: number) => ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${rate}:duration=${seconds}`];
const sine = (seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`];
const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];

/** Files as upstreams and the sandbox write them: the facts read in process must be ffprobe's. */
const plain: Record<string, () => Promise<Buffer>> = {
  'mp4, moov at the end': () => video(640, 360, 2, 30),
  'mov (qt brand)': () => video(320, 240, 1, 24, 'mov'),
  'mp4 with faststart': () => ffmpegFixture('faststart', [...testsrc('480x270', '25', 3), ...x264, '-movflags', '+faststart', '-f', 'mp4'], 'mp4'),
  'audio track first, then video': () =>
    ffmpegFixture('audio-first', [...sine(2), ...testsrc('256x144', '24', 2), '-map', '0:a', '-map', '1:v', ...x264, '-c:a', 'aac', '-f', 'mp4'], 'mp4'),
  'video with audio (the sandbox shape)': () =>
    ffmpegFixture('with-audio', [...testsrc('720x1280', '24', 4), ...sine(4), ...x264, '-c:a', 'aac', '-shortest', '-f', 'mp4'], 'mp4'),
  'NTSC rate 30000/1001': () => ffmpegFixture('ntsc', [...testsrc('320x180', '30000/1001', 2), ...x264, '-f', 'mp4'], 'mp4'),
  'MPEG-4 part 2 (mp4v)': () => ffmpegFixture('mp4v', [...testsrc('352x288', '25', 1), '-c:v', 'mpeg4', '-f', 'mp4'], 'mp4'),
};

describe('mp4Facts: a plain MP4/MOV read in process', () => {
  it.each(Object.keys(plain))('%s: the same facts as ffprobe', async (name) => {
    const bytes = await plain[name]!();
    const file = onDisk(bytes);
    const mine = await mp4Facts(file, bytes.length);
    const theirs = await ffprobeFacts(file, 'video', bytes.length);
    expect(mine).toBeDefined();
    expect(mine).toMatchObject({ kind: 'video', format: theirs.format, bytes: bytes.length, width: theirs.width, height: theirs.height });
    expect(mine!.duration).toBeCloseTo(theirs.duration!, 3);
    expect(mine!.fps).toBeCloseTo(theirs.fps!, 3);
  });

  it('leaves to ffprobe what it cannot be sure of: fragmented files, audio only, not an MP4, a cut-off file', async () => {
    const fragmented = await ffmpegFixture(
      'fragmented',
      [...testsrc('320x240', '24', 2), ...x264, '-movflags', 'frag_keyframe+empty_moov', '-f', 'mp4'],
      'mp4',
    );
    expect(await mp4Facts(onDisk(fragmented), fragmented.length)).toBeUndefined();
    const audioOnly = await ffmpegFixture('m4a', [...sine(2), '-c:a', 'aac', '-f', 'mp4'], 'mp4');
    expect(await mp4Facts(onDisk(audioOnly), audioOnly.length)).toBeUndefined();
    const text = Buffer.from('not a video at all, only some text of a fair length');
    expect(await mp4Facts(onDisk(text), text.length)).toBeUndefined();
    const whole = await video(640, 360, 2, 30);
    const cut = whole.subarray(0, whole.length - 100); // moov at the end: its box overruns the file
    expect(await mp4Facts(onDisk(cut), cut.length)).toBeUndefined();
  });

  it('answers nothing for a moov whose boxes do not add up', async () => {
    const bytes = Buffer.from(await plain['mp4 with faststart']!());
    const moov = bytes.indexOf('moov', 0, 'latin1') - 4;
    const mvhd = bytes.indexOf('mvhd', moov, 'latin1') - 4;
    bytes.writeUInt32BE(0xffff, mvhd); // mvhd claims more than its moov holds
    expect(await mp4Facts(onDisk(bytes), bytes.length)).toBeUndefined();
  });
});
