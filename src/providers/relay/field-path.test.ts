import { describe, expect, it } from 'vitest';
import { parseFieldPath, readAtPath, replaceAtPath, replaceEverywhere } from './field-path.js';

describe('field paths of caller media', () => {
  it.each([
    ['first_image', ['first_image']],
    ['image_urls[2]', ['image_urls', 2]],
    ['content[1].image_url.url', ['content', 1, 'image_url', 'url']],
    ['referenceImages[0]', ['referenceImages', 0]],
    ['first_image[0]', ['first_image', 0]],
    ['a[0][1].b', ['a', 0, 1, 'b']],
  ])('%s parses', (path, steps) => {
    expect(parseFieldPath(path)).toEqual(steps);
  });

  it.each(['', '.a', 'a.', 'a..b', '[0]', 'a[0]b', 'a.[0]', 'a[x]', 'a[0', 'a]'])('%j is not a path', (path) => {
    expect(parseFieldPath(path)).toBeUndefined();
  });

  it('reads the value at a path, undefined when a step is missing or of the wrong kind', () => {
    const body = { content: [{ type: 'text' }, { image_url: { url: 'u1' } }], image_urls: ['a', 'b'] };
    expect(readAtPath(body, 'content[1].image_url.url')).toBe('u1');
    expect(readAtPath(body, 'image_urls[1]')).toBe('b');
    expect(readAtPath(body, 'image_urls[2]')).toBeUndefined();
    expect(readAtPath(body, 'content.image_url')).toBeUndefined();
    expect(readAtPath(body, 'image_urls.length')).toBeUndefined();
    expect(readAtPath(body, 'missing[0]')).toBeUndefined();
  });

  it('replaces the value at a path only where it is the expected one, creating nothing', () => {
    const body: Record<string, unknown> = {
      content: [
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { url: 'assetId://a' } },
      ],
      image_urls: ['u0', 'assetId://b'],
      first_image: 'assetId://c',
    };
    expect(replaceAtPath(body, 'content[1].image_url.url', 'assetId://a', 'https://gw/inputs/a')).toBe(true);
    expect(replaceAtPath(body, 'image_urls[1]', 'assetId://b', 'https://gw/inputs/b')).toBe(true);
    expect(replaceAtPath(body, 'first_image', 'assetId://c', 'https://gw/inputs/c')).toBe(true);
    expect(body).toEqual({
      content: [
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { url: 'https://gw/inputs/a' } },
      ],
      image_urls: ['u0', 'https://gw/inputs/b'],
      first_image: 'https://gw/inputs/c',
    });
    const before = structuredClone(body);
    expect(replaceAtPath(body, 'image_urls[0]', 'not-this', 'x')).toBe(false); // another value there
    expect(replaceAtPath(body, 'image_urls[5]', undefined, 'x')).toBe(false); // no such item
    expect(replaceAtPath(body, 'reference_images[0]', undefined, 'x')).toBe(false); // no such field
    expect(replaceAtPath(body, 'content[0].text.more', 'x', 'y')).toBe(false); // through a string
    expect(body).toEqual(before);
  });

  it('replaces a value wherever it is (values only, not keys)', () => {
    const body = { reference_images: ['assetId://a', 'x', 'assetId://a'], nested: { deep: ['assetId://a'] }, 'assetId://a': 1 };
    expect(replaceEverywhere(body, 'assetId://a', 'signed')).toBe(3);
    expect(body).toEqual({ reference_images: ['signed', 'x', 'signed'], nested: { deep: ['signed'] }, 'assetId://a': 1 });
    expect(replaceEverywhere(body, 'assetId://zzz', 'signed')).toBe(0);
  });
});
