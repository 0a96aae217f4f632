/** Jobs, templates and a context for the comfyui provider tests (as the runner makes them). Test-only. */
import { planClipTask } from '../../src/contract/clip.js';
import { planModelCenterTask } from '../../src/contract/model-center.js';
import { planPicTask } from '../../src/contract/pic.js';
import { templateOf, type ComfyTemplate, type ComfyTemplateSpec } from '../../src/providers/comfyui/templates.js';
import type { ProviderContext, ProviderJob } from '../../src/providers/types.js';
import { image } from './media-fixtures.js';
import { asBody, jobOfPlan, providerContext } from './provider-jobs.js';

export const pic = (body: Record<string, unknown>, upstream = 'pic'): ProviderJob =>
  jobOfPlan(planPicTask(asBody({ model: 'pic', prompt: 'a fox', ...body })), upstream);
export const clip = (body: Record<string, unknown>, upstream = 'clip_3_1_fast'): ProviderJob =>
  jobOfPlan(planClipTask(asBody({ model: 'clip_3_1_fast', prompt: 'a fox runs', first_image: 'http://media.test/first.png', ...body })), upstream);
export const modelCenter = (body: Record<string, unknown>, upstream = 'imagegen-5.0'): ProviderJob =>
  jobOfPlan(planModelCenterTask(asBody({ model: 'imagegen-5.0', prompt: 'a fox', ...body })), upstream);

/** A context whose caller media are PNG frames of 640x360. */
export const comfyContext = (overrides: Partial<ProviderContext> = {}): ProviderContext =>
  providerContext({
    readMedia: async () => image(640, 360, 'png'),
    ...overrides,
  });

/** The default image workflow with a preview node beside the save node, and a sampler slot (a Model Center field passed as given). */
export function previewTemplate(name = 'sdxl-preview'): ComfyTemplate {
  const spec: Omit<ComfyTemplateSpec, 'workflow'> = {
    makes: 'image',
    slots: { prompt: '6.text', seed: '3.seed', width: '5.width', height: '5.height', sampler: '3.sampler_name', steps: '3.steps' },
  };
  const t = templateOf(name, spec, {
    3: {
      class_type: 'KSampler',
      inputs: {
        seed: 1,
        steps: 20,
        cfg: 7,
        sampler_name: 'euler',
        scheduler: 'normal',
        denoise: 1,
        model: ['4', 0],
        positive: ['6', 0],
        negative: ['7', 0],
        latent_image: ['5', 0],
      },
    },
    4: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd_xl_base_1.0.safetensors' } },
    5: { class_type: 'EmptyLatentImage', inputs: { width: 1024, height: 1024, batch_size: 1 } },
    6: { class_type: 'CLIPTextEncode', inputs: { text: 'x', clip: ['4', 1] } },
    7: { class_type: 'CLIPTextEncode', inputs: { text: '', clip: ['4', 1] } },
    8: { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
    9: { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'tests/img' } },
    10: { class_type: 'PreviewImage', inputs: { images: ['8', 0] } },
  });
  if ('problem' in t) throw new Error(t.problem);
  return t;
}

/** `previewTemplate` whose checkpoint is `ckpt` (one the server may not have). */
export function templateWithCheckpoint(ckpt: string, name = 'missing-ckpt'): ComfyTemplate {
  const t = structuredClone(previewTemplate(name));
  t.workflow['4']!.inputs.ckpt_name = ckpt;
  return t;
}
