import fs from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { filesOnDisk } from '../../test/helpers/files-on-disk.js';
import { audio, image, video } from '../../test/helpers/media-fixtures.js';
import { IMAGE_HEAD_BYTES, probeFile, probeImage, probeMedia, ProbeError } from './probe.js';

const { onDisk } = filesOnDisk('mg-probe-');

/** The first bytes of an ISO-BMFF file with an `ftyp` box of these brands and nothing else. */
function ftyp(major: string, ...compatible: string[]): Buffer {
  const size = 16 + 4 * compatible.length;
  const b = Buffer.alloc(size);
  b.writeUInt32BE(size, 0);
  b.write('ftyp', 4, 'latin1');
  b.write(major, 8, 'latin1');
  compatible.forEach((c, i) => {
    b.write(c, 16 + 4 * i, 'latin1');
  });
  return b;
}

describe('probe', () => {
  it.each(['png', 'jpeg', 'webp', 'gif', 'tiff', 'bmp', 'avif'] as const)('reads a %s image: format and pixel size', async (format) => {
    expect(probeImage(await image(640, 480, format))).toMatchObject({ kind: 'image', format, width: 640, height: 480 });
  });

  it('refuses bytes that are no image, and an HEIF header without a pixel size', () => {
    expect(() => probeImage(Buffer.from('just text'))).toThrow(ProbeError);
    expect(() => probeImage(ftyp('heic', 'mif1'))).toThrow(ProbeError);
  });

  it('tells mp4 from mov, and reads size, length and frame rate', async () => {
    expect(await probeMedia(await video(640, 360, 2, 30), 'video')).toMatchObject({ format: 'mp4', width: 640, height: 360, fps: 30 });
    const mov = await probeMedia(await video(640, 360, 2, 24, 'mov'), 'video');
    expect(mov).toMatchObject({ format: 'mov', fps: 24 });
    expect(mov.duration).toBeCloseTo(2, 1);
  });

  it('reads wav and mp3; audio is not a video and a video is not audio', async () => {
    expect(await probeMedia(await audio(3), 'audio')).toMatchObject({ format: 'wav', duration: 3 });
    expect((await probeMedia(await audio(3, 'mp3'), 'audio')).format).toBe('mp3');
    await expect(probeMedia(await audio(3), 'video')).rejects.toThrow('is not a readable video (mp4 or mov)');
    await expect(probeMedia(await video(640, 360, 2), 'audio')).rejects.toThrow('is a video, not an audio file (wav or mp3)');
    await expect(probeMedia(Buffer.alloc(0), 'image')).rejects.toThrow('is empty');
  });
});

describe('probeFile: the same facts from a file, without loading it', () => {
  it('images, video and audio', async () => {
    const png = await image(640, 480, 'png');
    expect(await probeFile(onDisk(png), 'image')).toEqual({ kind: 'image', format: 'png', bytes: png.length, width: 640, height: 480 });
    const mp4 = await video(640, 360, 2, 30);
    expect(await probeFile(onDisk(mp4), 'video')).toMatchObject({ kind: 'video', format: 'mp4', bytes: mp4.length, width: 640, height: 360, fps: 30 });
    expect(await probeFile(onDisk(await audio(3)), 'audio')).toMatchObject({ format: 'wav', duration: 3 });
    await expect(probeFile(onDisk(await audio(3)), 'video')).rejects.toThrow('is not a readable video (mp4 or mov)');
    await expect(probeFile(onDisk(Buffer.alloc(0)), 'image')).rejects.toThrow('is empty');
    await expect(probeFile(onDisk(Buffer.from('just text')), 'image')).rejects.toThrow(ProbeError);
  });

  it('an image is read from its head: what follows it does not matter, and its size is the file size', async () => {
    const png = await image(800, 600, 'png');
    const file = onDisk(Buffer.concat([png, Buffer.alloc(3 * IMAGE_HEAD_BYTES, 0xee)])); // a trailer of junk
    expect(await probeFile(file, 'image')).toEqual({ kind: 'image', format: 'png', bytes: png.length + 3 * IMAGE_HEAD_BYTES, width: 800, height: 600 });
  });

  it('a JPEG whose frame header is past the head (a large metadata segment first) is read whole', async () => {
    const jpeg = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#336699' } })
      .jpeg()
      .toBuffer();
    // APP15 segments of 65,533 bytes each right after SOI push the frame header past the head
    const segment = Buffer.concat([Buffer.from([0xff, 0xef, 0xff, 0xff]), Buffer.alloc(0xffff - 2, 0x20)]);
    const padding = Buffer.concat(Array.from({ length: Math.ceil(IMAGE_HEAD_BYTES / segment.length) + 1 }, () => segment));
    const file = onDisk(Buffer.concat([jpeg.subarray(0, 2), padding, jpeg.subarray(2)]));
    expect(() => probeImage(fs.readFileSync(file).subarray(0, IMAGE_HEAD_BYTES))).toThrow(ProbeError); // the head alone has no size
    expect(await probeFile(file, 'image')).toMatchObject({ format: 'jpeg', width: 320, height: 200, bytes: fs.statSync(file).size });
  });
});
