/**
 * `ProviderJob.params` is typed per family and form (G405): each family's stored-parameter schema
 * (src/contract/<family>.ts) describes what its plan stores, checked here with Ajv over requests of
 * every family and form; the types a provider reads after narrowing by `family` (and `form`) are
 * those schemas' `Static` types, checked by `npm run typecheck` (tsc), including fields one family
 * has and another has not (`@ts-expect-error`).
 */
import { Ajv } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ClipFormAParams, ClipFormBParams, planClipTask } from '../../src/contract/clip.js';
import type { FamilyId } from '../../src/contract/families.js';
import { familyRequestOf, type FamilyRequest } from '../../src/contract/family-request.js';
import { ModelCenterParams, planModelCenterTask } from '../../src/contract/model-center.js';
import { MotionParams, planMotionTask } from '../../src/contract/motion.js';
import { PicParams, planPicTask } from '../../src/contract/pic.js';
import { planReelTask, ReelParams } from '../../src/contract/reel.js';
import type { SubmitPlan } from '../../src/contract/submit-plan.js';
import { planVideosTask, VideosParams } from '../../src/contract/videos.js';
import type { ProviderJob, RequestedJob } from '../../src/providers/types.js';
import { asBody, jobOfPlan } from '../helpers/provider-jobs.js';

const ajv = new Ajv({ strict: false, allErrors: true });
const U = (n: number): string => `https://media.example/${n}.png`;

/** The stored-parameter schema of a family's request form. */
function schemaOf(family: FamilyId, form: 'A' | 'B' | null): TSchema {
  switch (family) {
    case 'pic':
      return PicParams;
    case 'clip':
      return form === 'B' ? ClipFormBParams : ClipFormAParams;
    case 'reel':
      return ReelParams;
    case 'motion':
      return MotionParams;
    case 'videos':
      return VideosParams;
    case 'model-center':
      return ModelCenterParams;
  }
}

const problems = (schema: TSchema, params: unknown): string | undefined => {
  const validate = ajv.compile(schema);
  return validate(params) ? undefined : ajv.errorsText(validate.errors);
};

const plans: Array<[string, () => SubmitPlan]> = [
  ['pic, defaults', () => planPicTask(asBody({ model: 'pic', prompt: 'a fox' }))],
  ['pic, every field', () => planPicTask(asBody({ model: 'pic-2', prompt: 'a fox', resolution: '2k', size: '16:9', image_urls: [U(1), 'assetId://a1'] }))],
  ['clip Form A, no model, seconds "8", input_reference', () => planClipTask(asBody({ prompt: 'p', seconds: '8', input_reference: [U(1), U(2)] }))],
  ['clip Form A, frames, 9:16', () => planClipTask(asBody({ model: 'clip3.1-fast', prompt: 'p', aspect_ratio: '9:16', first_image: U(1), last_image: U(2) }))],
  ['clip Form B, 4k spelled low, image_urls', () => planClipTask(asBody({ model: 'clip_3_1_pro', prompt: 'p', resolution: '4k', image_urls: [U(1)] }))],
  ['clip Form B, first frame', () => planClipTask(asBody({ model: 'clip_3_1_fast_stable', prompt: 'p', first_image: U(1) }))],
  ['reel Form A, image_urls', () => planReelTask(asBody({ model: 'reel-2', prompt: 'p', aspect_ratio: '16:9', seconds: '15', image_urls: [U(1)] }))],
  ['reel Form B, input_reference', () => planReelTask(asBody({ model: 'reelOa2Pro', prompt: 'p', input_reference: [U(1)] }))],
  [
    'motion 1.5 pro, text and a first frame',
    () =>
      planMotionTask(
        asBody({
          model: 'motion_1_5_pro_720p',
          content: [
            { type: 'text', text: 'go' },
            { type: 'image_url', image_url: { url: U(1) } },
          ],
        }),
      ),
  ],
  [
    'motion 2.0, first and last frame, no text, flex',
    () =>
      planMotionTask(
        asBody({
          model: 'motion_2_0',
          content: [
            { type: 'image_url', image_url: { url: U(1) }, role: 'first_frame' },
            { type: 'image_url', image_url: { url: U(2) }, role: 'last_frame' },
          ],
          service_tier: 'flex',
        }),
      ),
  ],
  [
    'motion 1.5 pro, automatic duration',
    () => planMotionTask(asBody({ model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'go' }], duration: -1, generate_audio: false })),
  ],
  ['videos, defaults', () => planVideosTask(asBody({ model: 'videos', prompt: 'p', duration: '6' }))],
  ['videos, frames', () => planVideosTask(asBody({ model: 'videos', prompt: 'p', duration: 5, image: U(1), lastFrameImage: U(2) }))],
  [
    'videos, references',
    () => planVideosTask(asBody({ model: 'videos_fast', prompt: 'p', duration: 4, referenceImages: [U(1)], referenceVideos: ['https://media.example/v.mp4'] })),
  ],
  [
    'Model Center sd model, its table with defaults',
    () => planModelCenterTask(asBody({ model: 'sd_2.0_fast_discount', prompt: 'p', reference_images: [U(1)], tools: [{ type: 'web_search' }] })),
  ],
  ['Model Center sd model, an alias of reference_images', () => planModelCenterTask(asBody({ model: 'sd_2.0_mini_special', prompt: 'p', images: [U(1)] }))],
  [
    'Model Center image model, fields passed on',
    () => planModelCenterTask(asBody({ model: 'imagegen-5.0', prompt: 'p', size: '640x480', style: 'ink', n: 1 })),
  ],
  ['Model Center video model, duration as digits', () => planModelCenterTask(asBody({ model: 'vidmodel-H3-768p-c1', prompt: 'p', duration: '3' }))],
];

describe('stored parameters (G405)', () => {
  it.each(plans)("%s: its family's (and form's) schema describes what the plan stores", (_name, plan) => {
    const p = plan();
    expect(problems(schemaOf(p.family, p.form), p.params)).toBeUndefined();
  });

  it('the plans cover every family and both forms of clip and reel', () => {
    const seen = new Set(plans.map(([, plan]) => `${plan().family}:${plan().form}`));
    expect([...seen].sort()).toEqual(['clip:A', 'clip:B', 'model-center:null', 'motion:null', 'pic:null', 'reel:A', 'reel:B', 'videos:null']);
  });

  it("the schemas tell the forms and families apart: another form's field, a missing default, an extra field of a closed family", () => {
    const formA = planClipTask(asBody({ model: 'clip3.1-fast', prompt: 'p' })).params;
    expect(problems(ClipFormBParams, formA)).toContain('must NOT have additional properties');
    expect(problems(ClipFormAParams, formA)).toBeUndefined();
    const { image_urls: _lists, ...withoutList } = planPicTask(asBody({ model: 'pic', prompt: 'p' })).params;
    expect(problems(PicParams, withoutList)).toContain("must have required property 'image_urls'");
    const motion = planMotionTask(asBody({ model: 'motion_2_0', content: [{ type: 'text', text: 'go' }] })).params;
    expect(problems(MotionParams, { ...motion, prompt: 'go' })).toContain('must NOT have additional properties');
    expect(problems(ModelCenterParams, { prompt: 'p', any_field: 1 })).toBeUndefined();
    expect(problems(ModelCenterParams, { any_field: 1 })).toContain("must have required property 'prompt'");
  });

  it("a job read back from a stored task is its family's request, with the parameters as stored", () => {
    const plan = planClipTask(asBody({ model: 'clip_3_1_pro', prompt: 'p', resolution: '1080p' }));
    const stored = JSON.parse(JSON.stringify(plan.params)) as Record<string, unknown>;
    const request = familyRequestOf(plan.family, plan.form, stored);
    expect(request).toEqual({ family: 'clip', form: 'B', params: plan.params });
    if (request.family !== 'clip' || request.form !== 'B') throw new Error('not clip Form B');
    expect(request.params.resolution).toBe('1080p');
  });
});

describe('parameter types by family and form (G405; checked by tsc)', () => {
  it("a job narrowed by family (and form) has that family's stored-parameter type", () => {
    expectTypeOf<FamilyRequest['family']>().toEqualTypeOf<FamilyId>();
    expectTypeOf<Extract<ProviderJob, { family: 'pic' }>['params']>().toEqualTypeOf<PicParams>();
    expectTypeOf<Extract<ProviderJob, { family: 'clip'; form: 'A' }>['params']>().toEqualTypeOf<ClipFormAParams>();
    expectTypeOf<Extract<ProviderJob, { family: 'clip'; form: 'B' }>['params']>().toEqualTypeOf<ClipFormBParams>();
    expectTypeOf<Extract<ProviderJob, { family: 'reel' }>['params']>().toEqualTypeOf<ReelParams>();
    expectTypeOf<Extract<ProviderJob, { family: 'motion' }>['params']>().toEqualTypeOf<MotionParams>();
    expectTypeOf<Extract<ProviderJob, { family: 'videos' }>['params']>().toEqualTypeOf<VideosParams>();
    expectTypeOf<Extract<RequestedJob, { family: 'model-center' }>['params']>().toEqualTypeOf<ModelCenterParams>();
    expectTypeOf<PicParams['size']>().toEqualTypeOf<'1:1' | '16:9' | '9:16' | '4:3' | '3:4' | '3:2' | '2:3' | '5:4' | '4:5' | '21:9' | undefined>();
    expectTypeOf<ClipFormBParams['resolution']>().toEqualTypeOf<'720p' | '1080p' | '4K'>();
    expectTypeOf<VideosParams['duration']>().toEqualTypeOf<number>();
    expectTypeOf(planClipTask).returns.toExtend<SubmitPlan>();
  });

  it('a field another family or form does not store is a compile error, and absent at run time', () => {
    const read = (job: ProviderJob): unknown => {
      if (job.family === 'clip' && job.form === 'B') {
        // @ts-expect-error Form B stores no `size` (its orientation is `aspect_ratio`)
        return job.params.size;
      }
      if (job.family === 'motion') {
        // @ts-expect-error motion stores no `prompt`: its text is a `content` object
        return job.params.prompt;
      }
      if (job.family === 'pic') {
        // @ts-expect-error pic stores no `aspect_ratio` (its aspect is `size`)
        return job.params.aspect_ratio;
      }
      return job.params.prompt;
    };
    expect(read(jobOfPlan(planClipTask(asBody({ model: 'clip_3_1_pro', prompt: 'p', aspect_ratio: '9:16' })), 'clip_3_1_pro'))).toBeUndefined();
    expect(read(jobOfPlan(planMotionTask(asBody({ model: 'motion_2_0', content: [{ type: 'text', text: 'go' }] })), 'motion_2_0'))).toBeUndefined();
    expect(read(jobOfPlan(planPicTask(asBody({ model: 'pic', prompt: 'p', size: '4:3' })), 'pic'))).toBeUndefined();
    expect(read(jobOfPlan(planVideosTask(asBody({ model: 'videos', prompt: 'the prompt', duration: 4 })), 'videos'))).toBe('the prompt');
  });
});
