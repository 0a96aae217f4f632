import { describe, expect, it } from 'vitest';
import { sizeForAspect } from './output.js';

describe('sizeForAspect', () => {
  it.each([
    ['1:1', 1024, false, 1024, 1024],
    ['16:9', 2048, false, 2048, 1152],
    ['9:16', 2048, false, 1152, 2048],
    ['21:9', 1024, false, 1024, 439], // within 1% of the ratio asked
    ['9:21', 1024, false, 439, 1024],
    ['21:9', 1024, true, 1024, 438], // even sides for H.264
    ['4:3', 4096, false, 4096, 3072],
  ])('%s at %i (even sides: %s) is %ix%i', (aspect, longSide, even, width, height) => {
    expect(sizeForAspect(aspect, longSide, even)).toEqual({ width, height });
  });

  it('reads the first two numbers as split(":") did; without a second one the sizes are NaN', () => {
    expect(sizeForAspect('16:9:1', 2048)).toEqual({ width: 2048, height: 1152 });
    expect(sizeForAspect('16', 2048)).toEqual({ width: Number.NaN, height: 2048 });
  });
});
