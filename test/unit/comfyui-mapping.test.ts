/**
 * The comfyui mapping table (G152), family by family: each request field is written
 * into the template's slot it feeds, or refused naming the field (what the provider's `refuse`
 * answers at submit), never dropped; and the values worked out from the task (size snapped to the
 * slot's multiple, frames for the duration at the template's rate, a seed per generation).
 */
import { describe, expect, it } from 'vitest';
import { planClipTask } from '../../src/contract/clip.js';
import { planModelCenterTask } from '../../src/contract/model-center.js';
import { planMotionTask } from '../../src/contract/motion.js';
import { planPicTask } from '../../src/contract/pic.js';
import { planReelTask } from '../../src/contract/reel.js';
import type { SubmitPlan } from '../../src/contract/submit-plan.js';
import { planVideosTask } from '../../src/contract/videos.js';
import { builtInTemplates } from '../../src/providers/comfyui/builtin-templates.js';
import { createComfyUiProvider } from '../../src/providers/comfyui/index.js';
import { bindingOf, framesFor, snapDown, workflowOf } from '../../src/providers/comfyui/mapping.js';
import { templateOf, type ComfyTemplate } from '../../src/providers/comfyui/templates.js';
import type { ProviderJob } from '../../src/providers/types.js';
import { previewTemplate } from '../helpers/comfyui-jobs.js';
import { asBody, jobOfPlan } from '../helpers/provider-jobs.js';

const F = 'http://media.test/f.png';
const L = 'http://media.test/l.png';
const R = 'http://media.test/r.png';
const builtIn = builtInTemplates();

/** A template over a copy of a built-in workflow with LoadImage nodes 60-62 added. */
function variant(name: string, of: string, makes: 'image' | 'video', slots: Record<string, unknown>): ComfyTemplate {
  const wf = structuredClone(builtIn[of]!.workflow);
  for (const id of ['60', '61', '62']) wf[id] = { class_type: 'LoadImage', inputs: { image: 'x.png' } };
  const t = templateOf(name, { makes, slots: slots as never }, wf);
  if ('problem' in t) throw new Error(t.problem);
  return t;
}
const size32 = { width: { to: '55.width', multiple: 32 }, height: { to: '55.height', multiple: 32 } };
const templates: Record<string, ComfyTemplate> = {
  'sdxl-preview': previewTemplate(),
  // first and last frame, a sound switch, the length in seconds
  frames: variant('frames', 'image-to-video', 'video', {
    prompt: '6.text',
    seed: '3.seed',
    first_frame: '56.image',
    last_frame: '60.image',
    ...size32,
    duration: '57.fps',
    generate_audio: '7.text',
  }),
  // two reference images, no frame
  refs: variant('refs', 'image-to-video', 'video', {
    prompt: '6.text',
    reference_image_1: '61.image',
    reference_image_2: '62.image',
    ...size32,
    frames: { to: '55.length', fps: 24, multiple: 4, plus: 1 },
  }),
  fixed: variant('fixed', 'image-to-video', 'video', { prompt: '6.text', first_frame: '56.image', ...size32, frames: '55.length' }),
  'fixed-image': variant('fixed-image', 'image', 'image', { prompt: '6.text' }),
};
const provider = createComfyUiProvider({ id: 'comfy', baseUrl: 'http://127.0.0.1:1', templates });

const job = (plan: SubmitPlan, template: string): ProviderJob => jobOfPlan(plan, template);
const pic = (body: Record<string, unknown>, t = 'image') => job(planPicTask(asBody({ model: 'pic', prompt: 'a fox', ...body })), t);
const clip = (body: Record<string, unknown>, t = 'image-to-video') => job(planClipTask(asBody({ model: 'clip_3_1_fast', prompt: 'waves', ...body })), t);
const reel = (body: Record<string, unknown>, t = 'image-to-video') => job(planReelTask(asBody({ model: 'reel-2', prompt: 'waves', ...body })), t);
const motion = (body: Record<string, unknown>, t = 'image-to-video') => job(planMotionTask(asBody({ model: 'motion_2_0', ...body })), t);
const videos = (body: Record<string, unknown>, t = 'image-to-video') =>
  job(planVideosTask(asBody({ model: 'videos', prompt: 'waves', duration: 5, ...body })), t);
const mc = (body: Record<string, unknown>, t = 'image') => job(planModelCenterTask(asBody({ prompt: 'a fox', ...body })), t);
const text = (t: string) => ({ type: 'text', text: t });
const frame = (url: string, role = 'first_frame') => ({ type: 'image_url', image_url: { url }, role });

/** The inputs written (node.input -> value) for a job on its template, caller images uploaded as `up/<slot>`. */
function written(j: ProviderJob): Record<string, unknown> {
  const t = templates[j.upstreamModel] ?? builtIn[j.upstreamModel]!;
  const b = bindingOf(t, j);
  if ('field' in b) throw new Error(`refused: ${b.field}: ${b.message}`);
  const uploaded = Object.fromEntries(Object.keys(b.media).map((s) => [s, `up/${s}`]));
  const { workflow, fieldOfInput } = workflowOf(t, b, uploaded, 42);
  return Object.fromEntries(
    Object.keys(fieldOfInput).map((k) => {
      const [node, input] = k.split('.') as [string, string];
      return [k, workflow[node]!.inputs[input]];
    }),
  );
}

describe('comfyui mapping: what is written', () => {
  it.each([
    ["pic: prompt, 1:1 1k, the generation's seed", pic({}), { '6.text': 'a fox', '5.width': 1024, '5.height': 1024, '3.seed': 42 }],
    ['pic 21:9 (1024x439): sides rounded down to 8', pic({ size: '21:9' }), { '5.width': 1024, '5.height': 432 }],
    [
      'pic-2 2k 9:16',
      job(planPicTask(asBody({ model: 'pic-2', prompt: 'x', size: '9:16', resolution: '2k' })), 'image'),
      { '5.width': 1152, '5.height': 2048 },
    ],
    [
      'clip 16:9 720p 8 s: 32-multiples, 4n+1 frames at 24 fps, the first frame',
      clip({ first_image: F }),
      { '55.width': 1280, '55.height': 704, '55.length': 193, '56.image': 'up/first_frame', '6.text': 'waves' },
    ],
    ['clip 9:16 1080p', clip({ first_image: F, aspect_ratio: '9:16', resolution: '1080p' }), { '55.width': 1056, '55.height': 1920 }],
    [
      'clip first and last frames',
      clip({ first_image: F, last_image: L }, 'frames'),
      { '56.image': 'up/first_frame', '60.image': 'up/last_frame', '57.fps': 8 },
    ],
    [
      'reel 9:16 10 s: its reference images into the reference slots',
      reel({ aspect_ratio: '9:16', image_urls: [R, R] }, 'refs'),
      { '61.image': 'up/reference_image_1', '62.image': 'up/reference_image_2', '55.width': 704, '55.height': 1280, '55.length': 241 },
    ],
    [
      'motion: the text of content is the prompt, its first_frame image the first frame; adaptive ratio from 16:9',
      motion({ content: [text('a wave'), frame(F)] }),
      { '6.text': 'a wave', '56.image': 'up/first_frame', '55.width': 1280, '55.height': 704, '55.length': 121 },
    ],
    [
      'videos: image and lastFrameImage are the first and last frames',
      videos({ image: F, lastFrameImage: L }, 'frames'),
      { '56.image': 'up/first_frame', '60.image': 'up/last_frame', '57.fps': 5 },
    ],
    [
      'Model Center image: aspect_ratio, negative_prompt and seed into their slots, n 1 honoured',
      mc({ model: 'imagegen-5.0', aspect_ratio: '4:3', negative_prompt: 'blur', seed: 7, n: 1 }),
      { '5.width': 1024, '5.height': 768, '7.text': 'blur', '3.seed': 7 },
    ],
    [
      'Model Center: a field of its own (sampler) into the slot of its name, as given',
      mc({ model: 'imagegen-5.0', sampler: 'dpmpp_2m', steps: 30 }, 'sdxl-preview'),
      { '3.sampler_name': 'dpmpp_2m', '3.steps': 30 },
    ],
    [
      'Model Center sd video: seed -1 is random, watermark false and generate_audio false need no slot',
      mc({ model: 'sd_2.0_fast_discount', first_image: [F], generate_audio: false, duration: 5 }, 'image-to-video'),
      { '3.seed': 42, '56.image': 'up/first_frame', '55.length': 121 },
    ],
    [
      'a generate_audio slot takes the value; duration in seconds into a duration slot',
      mc({ model: 'sd_2.0_fast_discount', first_image: [F], last_image: [L], duration: 5 }, 'frames'),
      { '7.text': true, '57.fps': 5 },
    ],
  ] as const)('%s', (_name, j, expected) => {
    expect(written(j as ProviderJob)).toMatchObject(expected);
  });
});

describe('comfyui mapping: an adaptive ratio', () => {
  it('takes the aspect of the reviewed first frame (4:3 at 720p: 960x720, 32-multiples)', () => {
    const j = motion({ content: [text('a wave'), frame(F)] });
    j.media.firstFrame = { ...j.media.firstFrame!, facts: { kind: 'image', format: 'png', bytes: 1, width: 640, height: 480 } };
    expect(written(j)).toMatchObject({ '55.width': 960, '55.height': 704 });
  });
});

describe('comfyui mapping: what is refused (400 at submit naming the field)', () => {
  it.each([
    ['reference images on the image template', pic({ image_urls: [R] }), 'image_urls[0]', /the ComfyUI template "image" takes 0 reference images/],
    ['a text-only clip on the image-to-video template', clip({}), 'first_image', /needs a first frame \(its first_frame slot\)/],
    ['a last frame where the template has no slot', clip({ first_image: F, last_image: L }), 'last_image', /has no last_frame slot/],
    ['a third reference image where the template has two', clip({ image_urls: [R, R, R] }, 'refs'), 'image_urls[2]', /takes 2 reference images/],
    [
      'one reference image where the template needs two',
      reel({ image_urls: [R] }, 'refs'),
      'image_urls',
      /needs 2 reference image\(s\) \(its reference_image_2 slot\)/,
    ],
    ['reel on a template needing a first frame (reel has no frame field)', reel({}), 'model', /needs a first frame/],
    ['motion without a first frame image', motion({ content: [text('a wave')] }), 'content', /needs a first frame/],
    [
      'motion generate_audio true (the pro models) on a template making no sound',
      motion({ model: 'motion_1_5_pro_720p', content: [text('x'), frame(F)] }),
      'generate_audio',
      /generate_audio true: the ComfyUI template "image-to-video" has no slot for it/,
    ],
    ['videos reference videos', videos({ referenceVideos: ['http://media.test/v.mp4'] }), 'referenceVideos[0]', /takes caller images only/],
    [
      'a video task on an image template',
      clip({ first_image: F }, 'image'),
      'model',
      /model clip_3_1_fast makes videos; the ComfyUI template "image" makes images/,
    ],
    ['an image task on a video template', pic({}, 'image-to-video'), 'model', /makes images; the ComfyUI template "image-to-video" makes videos/],
    [
      'Model Center quality with no slot',
      mc({ model: 'imagegen-5.0', quality: 'high' }),
      'quality',
      /quality high: the ComfyUI template "image" has no slot for it/,
    ],
    ['Model Center n 2', mc({ model: 'imagegen-5.0', n: 2 }), 'n', /n 2: .* has no slot for it/],
    [
      'Model Center sd: generate_audio true by default',
      mc({ model: 'sd_2.0_fast_discount', first_image: [F], duration: 5 }, 'image-to-video'),
      'generate_audio',
      /generate_audio true/,
    ],
    [
      'Model Center sd: a seed where the template has none',
      mc({ model: 'sd_2.0_fast_discount', first_image: [F], duration: 5, generate_audio: false, seed: 5 }, 'fixed'),
      'seed',
      /seed 5: .* has no seed slot/,
    ],
    ['a size on a template of one size', pic({ size: '16:9' }, 'fixed-image'), 'size', /size 16:9: the ComfyUI template "fixed-image" makes one size/],
  ] as const)('%s', (_name, j, field, message) => {
    const refusal = provider.refuse!(j as ProviderJob);
    expect(refusal).toMatchObject({ field });
    expect(refusal!.message).toMatch(message);
  });
});

describe('comfyui mapping: sizes and frames', () => {
  it("sides are rounded down to the slot's multiple, never below one multiple", () => {
    expect([snapDown(1024, 8), snapDown(439, 8), snapDown(720, 32), snapDown(20, 32)]).toEqual([1024, 432, 704, 32]);
  });

  it('frames: duration x fps, the nearest n x multiple + plus, at least one', () => {
    const wan = { targets: [], fps: 24, multiple: 4, plus: 1 };
    expect([framesFor(5, wan, 24), framesFor(8, wan, 24), framesFor(0.01, wan, 24)]).toEqual([121, 193, 1]);
    expect(framesFor(4, { targets: [], multiple: 8, plus: 1 }, 25)).toBe(97); // LTX: 8n+1 at the task's rate
    expect(framesFor(3, { targets: [] }, 24)).toBe(72);
  });
});
