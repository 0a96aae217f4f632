import { describe, it, expect } from 'vitest';
import sharp from 'sharp';
import { renderTextMask } from '../../media/bitmap-font.js';
import { ReferenceDecodeError, renderSandboxImage } from './image.js';
import type { SandboxImageSpec } from './image.js';

const PROMPT = 'A watercolour painting of a lighthouse on a rocky cliff at sunset, seagulls overhead';

function spec(overrides: Partial<SandboxImageSpec> = {}): SandboxImageSpec {
  return { width: 640, height: 480, prompt: PROMPT, seed: 'seed-1', format: 'png', ...overrides };
}

/** A solid-colour encoded image to use as a reference. */
function solid(width: number, height: number, colour: string, format: 'png' | 'jpeg' | 'webp'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })
    .toFormat(format)
    .toBuffer();
}

async function decode(image: Buffer): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

describe('renderSandboxImage', () => {
  it.each([
    [1024, 1024],
    [2048, 1152],
    [720, 1280],
    [333, 17],
    [64, 64],
    [1, 1],
    [4096, 2304],
  ])('renders exactly %ix%i', async (width, height) => {
    const out = await renderSandboxImage(spec({ width, height }));
    const meta = await sharp(out).metadata();
    expect([meta.width, meta.height]).toEqual([width, height]);
  });

  it('encodes png or jpeg as asked, without alpha', async () => {
    const png = await renderSandboxImage(spec({ format: 'png' }));
    const jpeg = await renderSandboxImage(spec({ format: 'jpeg' }));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const [pm, jm] = await Promise.all([sharp(png).metadata(), sharp(jpeg).metadata()]);
    expect([pm.format, pm.channels, pm.hasAlpha]).toEqual(['png', 3, false]);
    expect([jm.format, jm.width, jm.height]).toEqual(['jpeg', 640, 480]);
  });

  it('is deterministic: the same spec gives the same bytes', async () => {
    const references = [await solid(300, 200, '#c03030', 'png'), await solid(80, 240, '#30c060', 'jpeg')];
    for (const format of ['png', 'jpeg'] as const) {
      const a = await renderSandboxImage(spec({ format, references }));
      const b = await renderSandboxImage(spec({ format, references }));
      expect(a.equals(b)).toBe(true);
    }
  });

  it('changes with the prompt and with the seed', async () => {
    const base = await renderSandboxImage(spec());
    const otherPrompt = await renderSandboxImage(spec({ prompt: `${PROMPT}!` }));
    const otherSeed = await renderSandboxImage(spec({ seed: 'seed-2' }));
    expect(base.equals(otherPrompt)).toBe(false);
    expect(base.equals(otherSeed)).toBe(false);
    expect(otherPrompt.equals(otherSeed)).toBe(false);
  });

  it('draws the prompt as white text on a dark panel', async () => {
    const img = await decode(await renderSandboxImage(spec({ width: 800, height: 600 })));
    let white = 0;
    for (let i = 0; i < img.data.length; i += 3) {
      if (img.data[i] === 255 && img.data[i + 1] === 255 && img.data[i + 2] === 255) white++;
    }
    // Ink pixels exist and make up a plausible share of the picture.
    expect(white).toBeGreaterThan(2000);
    expect(white).toBeLessThan(img.width * img.height * 0.2);
  });

  it('composites the references as visible thumbnails along the bottom', async () => {
    const red = await solid(400, 300, '#ff0000', 'png');
    const blue = await solid(300, 400, '#0000ff', 'webp');
    const without = await renderSandboxImage(spec());
    const withRefs = await renderSandboxImage(spec({ references: [red, blue] }));
    expect(without.equals(withRefs)).toBe(false);

    const img = await decode(withRefs);
    const count = (r: number, g: number, b: number): number => {
      let n = 0;
      for (let i = 0; i < img.data.length; i += 3) {
        if (Math.abs(img.data[i]! - r) < 8 && Math.abs(img.data[i + 1]! - g) < 8 && Math.abs(img.data[i + 2]! - b) < 8) n++;
      }
      return n;
    };
    expect(count(255, 0, 0)).toBeGreaterThan(1000);
    expect(count(0, 0, 255)).toBeGreaterThan(1000);
    // The red thumbnail sits in the bottom quarter, left of the blue one.
    const firstRow = (r: number, g: number, b: number): { y: number; x: number } => {
      for (let p = 0; p < img.width * img.height; p++) {
        const i = p * 3;
        if (Math.abs(img.data[i]! - r) < 8 && Math.abs(img.data[i + 1]! - g) < 8 && Math.abs(img.data[i + 2]! - b) < 8) {
          return { y: Math.floor(p / img.width), x: p % img.width };
        }
      }
      return { y: -1, x: -1 };
    };
    const redAt = firstRow(255, 0, 0);
    const blueAt = firstRow(0, 0, 255);
    expect(redAt.y).toBeGreaterThan(img.height * 0.7);
    expect(blueAt.y).toBeGreaterThan(img.height * 0.7);
    expect(redAt.x).toBeLessThan(blueAt.x);
  });

  it('rejects an undecodable reference, naming its index', async () => {
    const good = await solid(50, 50, '#808080', 'png');
    const bad = Buffer.from('definitely not an image');
    await expect(renderSandboxImage(spec({ references: [good, bad] }))).rejects.toThrow(/reference image 1\b/);
    const err: unknown = await renderSandboxImage(spec({ references: [good, good, Buffer.alloc(0), bad] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReferenceDecodeError);
    expect((err as ReferenceDecodeError).index).toBe(2); // the lowest failing index
    expect((err as Error).message).toMatch(/reference image 2 could not be decoded/);
    const truncated = good.subarray(0, Math.floor(good.length / 2));
    await expect(renderSandboxImage(spec({ references: [truncated] }))).rejects.toThrow(/reference image 0\b/);
  });

  it('rejects sizes outside 1-4096 and unknown formats', async () => {
    for (const [width, height] of [
      [0, 10],
      [10, 4097],
      [10.5, 10],
      [Number.NaN, 10],
    ] as const) {
      await expect(renderSandboxImage(spec({ width, height }))).rejects.toThrow(RangeError);
    }
    await expect(renderSandboxImage({ ...spec(), format: 'gif' as unknown as 'png' })).rejects.toThrow(RangeError);
  });

  it('survives odd prompts: empty, huge, non-ASCII', async () => {
    for (const prompt of ['', '   ', 'x'.repeat(20_000), 'caf\u00e9 \u65e5\u672c \u{1f600}\n\nline two']) {
      const out = await renderSandboxImage(spec({ prompt, width: 300, height: 200 }));
      const meta = await sharp(out).metadata();
      expect([meta.width, meta.height]).toEqual([300, 200]);
    }
  });

  it('uses a text mask that fits the panel bounds it is given', () => {
    for (const [width, height] of [
      [1024, 1024],
      [2048, 1152],
      [720, 1280],
      [64, 64],
    ] as const) {
      const maxWidth = Math.floor(width * 0.9);
      const maxHeight = Math.floor(height * 0.4);
      for (const prompt of [PROMPT, PROMPT.repeat(10), 'short']) {
        const mask = renderTextMask(prompt, { maxWidth, maxHeight, scale: 7, align: 'center' });
        expect(mask.width).toBeLessThanOrEqual(maxWidth);
        expect(mask.height).toBeLessThanOrEqual(maxHeight);
        expect(mask.data.length).toBe(mask.width * mask.height);
      }
    }
  });
});
