/**
 * The templates every `comfyui` provider has (G151), used when a route names no
 * template of its own: `image` (text to image with an SDXL checkpoint) for image tasks and
 * `image-to-video` (Wan 2.2 TI2V 5B from a first frame) for video tasks. Their workflows are plain
 * API-format exports in ./templates (shipped beside the compiled code: tsconfig.build.json includes
 * them); a providers.json `models` entry of the same name replaces one.
 */
import { fileURLToPath } from 'node:url';
import { readWorkflow, templateOf, type ComfyTemplate, type ComfyTemplateSpec } from './templates.js';

interface BuiltIn extends Omit<ComfyTemplateSpec, 'workflow'> {
  file: string;
}

const BUILT_INS: Record<string, BuiltIn> = {
  image: {
    file: 'sdxl-text-to-image.json',
    makes: 'image',
    slots: {
      prompt: '6.text',
      negative_prompt: '7.text',
      seed: '3.seed',
      width: { to: '5.width', multiple: 8 },
      height: { to: '5.height', multiple: 8 },
    },
    outputs: ['9'],
  },
  'image-to-video': {
    file: 'wan22-image-to-video.json',
    makes: 'video',
    slots: {
      prompt: '6.text',
      negative_prompt: '7.text',
      seed: '3.seed',
      first_frame: '56.image',
      width: { to: '55.width', multiple: 32 },
      height: { to: '55.height', multiple: 32 },
      frames: { to: '55.length', fps: 24, multiple: 4, plus: 1 },
    },
    outputs: ['58'],
  },
};

/** The template a task of this kind uses when its route names none. */
export const DEFAULT_TEMPLATE = { image: 'image', video: 'image-to-video' } as const;

/** Where a built-in template's workflow file is (in src/ when run from source, in dist/ when built). */
export const builtInWorkflowPath = (file: string): string => fileURLToPath(new URL(`./templates/${file}`, import.meta.url));

let loaded: Record<string, ComfyTemplate> | undefined;

/** The built-in templates, read once. */
export function builtInTemplates(): Record<string, ComfyTemplate> {
  if (loaded) return loaded;
  const out: Record<string, ComfyTemplate> = {};
  for (const [name, { file, ...spec }] of Object.entries(BUILT_INS)) {
    const t = templateOf(name, spec, readWorkflow(builtInWorkflowPath(file)));
    if ('problem' in t) throw new Error(`the built-in ComfyUI template ${name}: ${t.problem}`);
    out[name] = t;
  }
  loaded = out;
  return out;
}
