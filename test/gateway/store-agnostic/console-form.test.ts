/**
 * The console's playground form from the gateway's own OpenAPI document (G367): every family's
 * fields with the contract's names, enum values, limits and exclusive pairs, its models, and the
 * per-model fields of Model Center; the create paths the console posts to exist in the document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPath, FAMILY_IDS } from '../../../console/src/contract-paths.js';
import { formOf, type Json } from '../../../console/src/form-fields.js';
import { CLIP_ASPECT_RATIOS } from '../../../src/contract/clip.js';
import { PIC_MODELS, PIC_RESOLUTIONS, PIC_SIZES } from '../../../src/contract/pic.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

let h: Harness;
let doc: Json;
const paths = { power_prefix: '/power', api_prefix: '/api' };
beforeAll(async () => {
  h = await createHarness({ workers: false, env: { MEDIAGATE_POWER_PREFIX: '/power', MEDIAGATE_API_PREFIX: '/api' } });
  doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await h.close();
});

describe('the playground form', () => {
  it('posts every family to a create path of the document, with models to pick', () => {
    for (const family of FAMILY_IDS) {
      const path = createPath(family, paths);
      expect(doc.paths[path]?.post?.requestBody, `${family} at ${path}`).toBeDefined();
      expect(formOf(doc, family, path).models.length, family).toBeGreaterThan(0);
    }
  });

  it("pic: the contract's models, resolution and size as selects of its values, image_urls as media with its limit", () => {
    const form = formOf(doc, 'pic', createPath('pic', paths));
    expect(form.models).toEqual([...PIC_MODELS]);
    expect(form.promptMax).toBe(20_000);
    const byName = Object.fromEntries(form.fields.map((f) => [f.name, f]));
    expect(byName.resolution).toMatchObject({ kind: 'enum', values: [...PIC_RESOLUTIONS], required: false });
    expect(byName.size).toMatchObject({ kind: 'enum', values: [...PIC_SIZES] });
    expect(byName.image_urls).toMatchObject({ kind: 'urls', maxItems: 6 });
    expect(Object.keys(byName)).not.toContain('callback_url');
  });

  it('clip: exclusive pairs read from the contract, both ways', () => {
    const byName = Object.fromEntries(formOf(doc, 'clip', createPath('clip', paths)).fields.map((f) => [f.name, f]));
    expect(byName.size!.exclusive).toEqual(['aspect_ratio']);
    expect(byName.aspect_ratio).toMatchObject({ kind: 'enum', values: [...CLIP_ASPECT_RATIOS], exclusive: ['size'] });
    expect(byName.duration).toMatchObject({ kind: 'integer', exclusive: ['seconds'] });
    expect(byName.input_reference!.exclusive).toEqual(expect.arrayContaining(['image_urls']));
  });

  it("videos: duration required; motion: the prompt is the text item's; model-center: each described model's own fields", () => {
    const videos = formOf(doc, 'videos', createPath('videos', paths));
    expect(videos.models).toEqual(['videos', 'videos_fast']);
    expect(videos.fields.find((f) => f.name === 'duration')).toMatchObject({ kind: 'integer', required: true });
    const motion = formOf(doc, 'motion', createPath('motion', paths));
    expect(motion.fields.map((f) => f.name)).not.toContain('content');
    const center = formOf(doc, 'model-center', createPath('model-center', paths));
    expect(center.models).toContain('sd_2.0_fast_discount');
    expect(center.modelFields['sd_2.0_fast_discount']!.find((f) => f.name === 'reference_images')).toMatchObject({ kind: 'urls', maxItems: 9 });
  });
});
