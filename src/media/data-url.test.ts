import { describe, expect, it } from 'vitest';
import { dataUrlLabel, DataUrlError, decodeDataUrl, isDataUrl } from './data-url.js';

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

describe('data: URLs', () => {
  it('base64 and percent-encoded data decode to their bytes and media type', () => {
    expect(decodeDataUrl(`data:image/png;base64,${png.toString('base64')}`, 100)).toEqual({ mediaType: 'image/png', bytes: png });
    expect(decodeDataUrl('DATA:Image/PNG;BASE64,iVBO\nRw0K', 100).mediaType).toBe('image/png');
    expect(decodeDataUrl('data:,a%20b%ff', 100).bytes).toEqual(Buffer.from([0x61, 0x20, 0x62, 0xff]));
    expect(decodeDataUrl('data:text/plain;charset=utf-8;base64,aGk=', 100)).toEqual({ mediaType: 'text/plain', bytes: Buffer.from('hi') });
  });

  it('is bounded before decoding: a larger one is refused as too large', () => {
    const big = `data:image/png;base64,${Buffer.alloc(300).toString('base64')}`;
    expect(() => decodeDataUrl(big, 200)).toThrow(expect.objectContaining({ tooLarge: true, message: 'is larger than 200 bytes' }));
    expect(decodeDataUrl(big, 300).bytes).toHaveLength(300);
  });

  it('a malformed one says what is wrong', () => {
    for (const [url, why] of [
      ['data:image/png;base64', /without a comma/],
      ['data:image/png;base64,$$$$', /base64 is malformed/],
      ['data:,100%', /percent-encoding is malformed/],
      ['data:image/png;base64,', /without data/],
      ['https://x.test/a.png', /not a data: URL/],
    ] as const) {
      expect(() => decodeDataUrl(url, 100)).toThrow(DataUrlError);
      expect(() => decodeDataUrl(url, 100)).toThrow(why);
    }
  });

  it('is told apart from other URLs, and labelled without its bytes', () => {
    expect(isDataUrl('data:image/png;base64,AAAA')).toBe(true);
    expect(isDataUrl('https://x.test/data:')).toBe(false);
    expect(dataUrlLabel(`data:video/mp4;base64,${'A'.repeat(1000)}`)).toBe('data:video/mp4');
  });
});
