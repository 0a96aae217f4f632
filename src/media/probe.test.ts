import { describe, expect, it } from 'vitest';
import { audio, image, video } from '../../test/helpers/media-fixtures.js';
import { probeImage, probeMedia, ProbeError } from './probe.js';

/** The first bytes of an ISO-BMFF file with an `ftyp` box of these brands and nothing else. */
function ftyp(major: string, ...compatible: string[]): Buffer {
  const size = 16 + 4 * compatible.length;
  const b = Buffer.alloc(size);
  b.writeUInt32BE(size, 0);
  b.write('ftyp', 4, 'latin1');
  b.write(major, 8, 'latin1');
  compatible.forEach((c, i) => { b.write(c, 16 + 4 * i, 'latin1'); });
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
