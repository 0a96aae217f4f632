import { describe, it, expect } from 'vitest';
import { FONT_METRICS, hasGlyph, renderTextMask } from './bitmap-font.js';

/** The mask as rows of `#`/`.` for readable assertions. */
function rows(mask: { data: Buffer; width: number; height: number }): string[] {
  const out: string[] = [];
  for (let y = 0; y < mask.height; y++) {
    let row = '';
    for (let x = 0; x < mask.width; x++) row += mask.data[y * mask.width + x] === 255 ? '#' : '.';
    out.push(row);
  }
  return out;
}

describe('bitmap font', () => {
  it('has a glyph for every printable ASCII character and none beyond', () => {
    for (let c = 0x20; c <= 0x7e; c++) expect(hasGlyph(String.fromCharCode(c))).toBe(true);
    for (const ch of ['\u00e9', '\u20ac', '\u65e5', '\t', '\u007f']) expect(hasGlyph(ch)).toBe(false);
  });

  it('draws glyphs pixel-exactly at scale 1', () => {
    const mask = renderTextMask('Hi', { maxWidth: 11, maxHeight: 9 });
    expect(mask.scale).toBe(1);
    expect(rows(mask)).toEqual([
      '#...#...#..',
      '#...#......',
      '#...#..##..',
      '#####...#..',
      '#...#...#..',
      '#...#...#..',
      '#...#..###.',
      '...........',
      '...........',
    ]);
  });

  it('returns a single-channel 0/255 buffer of exactly width x height', () => {
    const mask = renderTextMask('Hello, world!', { maxWidth: 500, maxHeight: 200 });
    expect(mask.data.length).toBe(mask.width * mask.height);
    expect(new Set(mask.data)).toEqual(new Set([0, 255]));
  });

  it('picks the largest scale that fits, capped by opts.scale', () => {
    const big = renderTextMask('Hi', { maxWidth: 110, maxHeight: 90 });
    expect(big.scale).toBe(10);
    expect([big.width, big.height]).toEqual([110, 90]);
    const capped = renderTextMask('Hi', { maxWidth: 110, maxHeight: 90, scale: 3 });
    expect(capped.scale).toBe(3);
    expect([capped.width, capped.height]).toEqual([33, 27]);
  });

  it('scales every font pixel to a scale x scale block', () => {
    const one = renderTextMask('Ag', { maxWidth: 11, maxHeight: 9 });
    const three = renderTextMask('Ag', { maxWidth: 33, maxHeight: 27 });
    expect(three.scale).toBe(3);
    for (let y = 0; y < three.height; y++) {
      for (let x = 0; x < three.width; x++) {
        expect(three.data[y * three.width + x]).toBe(one.data[Math.floor(y / 3) * one.width + Math.floor(x / 3)]);
      }
    }
  });

  it('word-wraps, keeps hard line breaks and splits over-long words', () => {
    const width = 7 * FONT_METRICS.advance - 1; // 7 characters at scale 1
    const wrapped = renderTextMask('aaa bbb ccc', { maxWidth: width, maxHeight: 1000, scale: 1 });
    expect(wrapped.lines).toEqual(['aaa bbb', 'ccc']);
    const broken = renderTextMask('one\ntwo  three', { maxWidth: 1000, maxHeight: 1000, scale: 1 });
    expect(broken.lines).toEqual(['one', 'two three']);
    const long = renderTextMask('abcdefghijklmnop', { maxWidth: width, maxHeight: 1000, scale: 1 });
    expect(long.lines).toEqual(['abcdefg', 'hijklmn', 'op']);
  });

  it('shrinks a long text to a smaller scale instead of cutting it', () => {
    const text = 'the quick brown fox jumps over the lazy dog '.repeat(4);
    const mask = renderTextMask(text, { maxWidth: 400, maxHeight: 200, scale: 8 });
    expect(mask.truncated).toBe(false);
    expect(mask.scale).toBeLessThan(8);
    expect(mask.lines.join(' ')).toBe(text.trim());
  });

  it('truncates with "..." when even scale 1 does not fit', () => {
    const mask = renderTextMask('word '.repeat(200), { maxWidth: 100, maxHeight: 30 });
    expect(mask.truncated).toBe(true);
    expect(mask.scale).toBe(1);
    expect(mask.lines).toHaveLength(2);
    expect(mask.lines[1]?.endsWith('...')).toBe(true);
    expect(mask.width).toBeLessThanOrEqual(100);
    expect(mask.height).toBeLessThanOrEqual(30);
  });

  it('fills a short last line with the start of the hidden text before the "..."', () => {
    const width = 10 * FONT_METRICS.advance - 1;
    const mask = renderTextMask('A watercolour painting', { maxWidth: width, maxHeight: 9 });
    expect(mask.lines).toEqual(['A water...']);
  });

  it('draws characters outside ASCII as a filled box', () => {
    const mask = renderTextMask('\u20ac', { maxWidth: 5, maxHeight: 9 });
    expect(rows(mask)).toEqual(['#####', '#####', '#####', '#####', '#####', '#####', '#####', '.....', '.....']);
  });

  it('returns an empty mask for blank text or bounds too small for one character', () => {
    for (const mask of [
      renderTextMask('   \n ', { maxWidth: 100, maxHeight: 100 }),
      renderTextMask('hello', { maxWidth: 4, maxHeight: 100 }),
      renderTextMask('hello', { maxWidth: 100, maxHeight: 8 }),
    ]) {
      expect([mask.width, mask.height, mask.data.length]).toEqual([0, 0, 0]);
    }
  });

  it('always stays within the bounds', () => {
    const texts = [
      'x',
      'Hello world',
      'a much longer prompt with several words to wrap around '.repeat(6),
      'supercalifragilistic'.repeat(9),
      'line\n\nbreaks\nhere',
    ];
    for (const text of texts) {
      for (const [maxWidth, maxHeight] of [
        [5, 9],
        [37, 20],
        [100, 30],
        [333, 77],
        [921, 409],
        [3686, 921],
      ] as const) {
        for (const scale of [undefined, 1, 4, 15]) {
          const mask = renderTextMask(text, { maxWidth, maxHeight, ...(scale === undefined ? {} : { scale }) });
          expect(mask.width).toBeLessThanOrEqual(maxWidth);
          expect(mask.height).toBeLessThanOrEqual(maxHeight);
          expect(mask.data.length).toBe(mask.width * mask.height);
        }
      }
    }
  });

  it('centres shorter lines when asked', () => {
    const mask = renderTextMask('abc\na', { maxWidth: 1000, maxHeight: 1000, scale: 1, align: 'center' });
    const secondLineTop = FONT_METRICS.lineHeight;
    const firstInk = rows(mask)
      .slice(secondLineTop, secondLineTop + FONT_METRICS.glyphHeight)
      .map((r) => r.indexOf('#'))
      .filter((i) => i >= 0);
    expect(Math.min(...firstInk)).toBe(6); // one advance in from the left of a 3-character block
  });
});
