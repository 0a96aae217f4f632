import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/main/cli-args.js';
import { bodyFor, familyOf } from '../../src/main/generate-body.js';

// `mediagate generate`'s flags as each family's fields (G237): the table of what a model takes is
// the interface's (docs/reference/api/model-center.md#other-models: imagegen takes `size`).
describe('generate image|video flags', () => {
  it('a Model Center image model takes --size (its WxH or W:H), --aspect-ratio, --resolution and --image', () => {
    expect(familyOf('image', 'imagegen-5.0')).toBe('model-center');
    expect(bodyFor('model-center', 'imagegen-5.0', 'a fox', { size: '800x600', resolution: '2k', image: ['https://example.com/a.png'] })).toEqual({
      model: 'imagegen-5.0',
      prompt: 'a fox',
      size: '800x600',
      resolution: '2k',
      reference_images: ['https://example.com/a.png'],
    });
    expect(bodyFor('model-center', 'imagegen_5.0Pro', 'a fox', { 'aspect-ratio': '16:9' })).toMatchObject({ aspect_ratio: '16:9' });
  });

  it('an unknown model is a usage error listing the models that make that kind (G485)', () => {
    const image = (): unknown => familyOf('image', 'nosuch');
    expect(image).toThrow(UsageError);
    expect(image).toThrow(/^--model nosuch: no such model; the image models: pic, pic-2, .*imagegen-5\.0/);
    expect(image).not.toThrow(/videos_fast/);
    expect(() => familyOf('video', 'nosuch')).toThrow(/the video models: .*videos_fast.*kinetic-o3-video/);
    expect(() => familyOf('video', 'nosuch')).not.toThrow(/imagegen/);
  });

  it('flags a model does not have are usage errors listing the ones it has', () => {
    const refusal = (model: string, flags: Parameters<typeof bodyFor>[3]): string => {
      try {
        bodyFor('model-center', model, 'x', flags);
      } catch (err) {
        return err instanceof UsageError ? err.message : 'not a usage error';
      }
      return 'accepted';
    };
    expect(refusal('imagegen-5.0', { duration: '5' })).toBe(
      '--duration is not a field of the model-center family (imagegen-5.0); it takes --size, --aspect-ratio, --resolution, --image',
    );
    expect(refusal('sd_2.0_fast_discount', { size: '800x600' })).toMatch(/^--size is not a field of the model-center family \(sd_2\.0_fast_discount\)/);
    expect(refusal('sd_2.0_fast_discount', { duration: '5', 'first-image': 'https://example.com/a.png', audio: true })).toBe('accepted');
  });
});
