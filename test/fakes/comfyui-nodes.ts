/**
 * The node types the fake ComfyUI knows, with their inputs as ComfyUI's `INPUT_TYPES` declare them
 * (types, combo lists, min/max), and `validate_prompt` as execution.py does it: every node needs a
 * known `class_type` (`missing_node_type` otherwise), the outputs are the output nodes, each is
 * validated through its links (`required_input_missing`, `return_type_mismatch`,
 * `invalid_input_type`, `value_smaller_than_min`, `value_bigger_than_max`, `value_not_in_list`,
 * LoadImage's own `custom_validation_failed` "Invalid image file"), errors collected per node as
 * `node_errors: {id: {errors, dependent_outputs, class_type}}`; none valid -> 400
 * `prompt_outputs_failed_validation`, some valid -> queued with the others' node_errors. Test-only.
 */
export type InputType =
  | 'INT'
  | 'FLOAT'
  | 'STRING'
  | 'BOOLEAN'
  | 'MODEL'
  | 'CLIP'
  | 'VAE'
  | 'CONDITIONING'
  | 'LATENT'
  | 'IMAGE'
  | 'VIDEO'
  | 'MASK'
  | 'AUDIO'
  | readonly string[];

export interface InputSpec {
  type: InputType;
  min?: number;
  max?: number;
}

export interface NodeDef {
  required: Record<string, InputSpec>;
  optional?: Record<string, InputSpec>;
  returns: readonly string[];
  output?: boolean;
  /** VALIDATE_INPUTS: true, or why not (the combo list check is then skipped for those inputs). */
  validate?: { inputs: readonly string[]; check(inputs: Record<string, unknown>): true | string };
}

export interface Installed {
  checkpoints: string[];
  diffusionModels: string[];
  textEncoders: string[];
  vaes: string[];
}

export interface NodeError {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

const SAMPLERS = ['euler', 'euler_ancestral', 'heun', 'dpm_2', 'dpmpp_2m', 'dpmpp_sde', 'uni_pc', 'ddim', 'lcm'];
const SCHEDULERS = ['normal', 'karras', 'exponential', 'sgm_uniform', 'simple', 'ddim_uniform', 'beta'];
const MAX_RESOLUTION = 16384;
const int = (min: number, max: number): InputSpec => ({ type: 'INT', min, max });
const float = (min: number, max: number): InputSpec => ({ type: 'FLOAT', min, max });

export function nodeDefs(installed: Installed, inputExists: (name: string) => boolean): Record<string, NodeDef> {
  return {
    CheckpointLoaderSimple: { required: { ckpt_name: { type: installed.checkpoints } }, returns: ['MODEL', 'CLIP', 'VAE'] },
    UNETLoader: {
      required: { unet_name: { type: installed.diffusionModels }, weight_dtype: { type: ['default', 'fp8_e4m3fn', 'fp8_e4m3fn_fast', 'fp8_e5m2'] } },
      returns: ['MODEL'],
    },
    CLIPLoader: {
      required: {
        clip_name: { type: installed.textEncoders },
        type: {
          type: [
            'stable_diffusion',
            'stable_cascade',
            'sd3',
            'stable_audio',
            'mochi',
            'ltxv',
            'pixart',
            'cosmos',
            'lumina2',
            'wan',
            'hidream',
            'chroma',
            'ace',
            'omnigen2',
            'qwen_image',
            'hunyuan_image',
          ],
        },
      },
      optional: { device: { type: ['default', 'cpu'] } },
      returns: ['CLIP'],
    },
    VAELoader: { required: { vae_name: { type: installed.vaes } }, returns: ['VAE'] },
    ModelSamplingSD3: { required: { model: { type: 'MODEL' }, shift: float(0, 100) }, returns: ['MODEL'] },
    CLIPTextEncode: { required: { text: { type: 'STRING' }, clip: { type: 'CLIP' } }, returns: ['CONDITIONING'] },
    EmptyLatentImage: { required: { width: int(16, MAX_RESOLUTION), height: int(16, MAX_RESOLUTION), batch_size: int(1, 4096) }, returns: ['LATENT'] },
    Wan22ImageToVideoLatent: {
      required: {
        vae: { type: 'VAE' },
        width: int(32, MAX_RESOLUTION),
        height: int(32, MAX_RESOLUTION),
        length: int(1, MAX_RESOLUTION),
        batch_size: int(1, 4096),
      },
      optional: { start_image: { type: 'IMAGE' } },
      returns: ['LATENT'],
    },
    KSampler: {
      required: {
        model: { type: 'MODEL' },
        seed: int(0, 2 ** 64 - 1) /* 0xffffffffffffffff, as a double */,
        steps: int(1, 10000),
        cfg: float(0, 100),
        sampler_name: { type: SAMPLERS },
        scheduler: { type: SCHEDULERS },
        positive: { type: 'CONDITIONING' },
        negative: { type: 'CONDITIONING' },
        latent_image: { type: 'LATENT' },
        denoise: float(0, 1),
      },
      returns: ['LATENT'],
    },
    VAEDecode: { required: { samples: { type: 'LATENT' }, vae: { type: 'VAE' } }, returns: ['IMAGE'] },
    LoadImage: {
      required: { image: { type: [] } },
      returns: ['IMAGE', 'MASK'],
      validate: { inputs: ['image'], check: (i) => (inputExists(String(i.image)) ? true : `Invalid image file: ${String(i.image)}`) },
    },
    SaveImage: { required: { images: { type: 'IMAGE' }, filename_prefix: { type: 'STRING' } }, returns: [], output: true },
    PreviewImage: { required: { images: { type: 'IMAGE' } }, returns: [], output: true },
    CreateVideo: { required: { images: { type: 'IMAGE' }, fps: float(1, 120) }, optional: { audio: { type: 'AUDIO' } }, returns: ['VIDEO'] },
    SaveVideo: {
      required: { video: { type: 'VIDEO' }, filename_prefix: { type: 'STRING' }, format: { type: ['auto', 'mp4'] }, codec: { type: ['auto', 'h264'] } },
      returns: [],
      output: true,
    },
  };
}

type Prompt = Record<string, { class_type?: unknown; inputs?: Record<string, unknown> }>;
type Validated = Map<string, { ok: boolean; errors: NodeError[] }>;

const isLink = (v: unknown): v is [string, number] => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number';

function validateInputs(prompt: Prompt, id: string, defs: Record<string, NodeDef>, validated: Validated): { ok: boolean; errors: NodeError[] } {
  const done = validated.get(id);
  if (done) return done;
  const node = prompt[id]!;
  const def = defs[String(node.class_type)]!;
  const inputs = node.inputs ?? {};
  const errors: NodeError[] = [];
  let ok = true;
  const specs: Record<string, InputSpec> = { ...def.required, ...def.optional };
  const selfChecked = def.validate?.inputs ?? [];
  for (const [name, spec] of Object.entries(specs)) {
    const required = name in def.required;
    if (!(name in inputs)) {
      if (required) errors.push({ type: 'required_input_missing', message: 'Required input is missing', details: name, extra_info: { input_name: name } });
      continue;
    }
    const val = inputs[name];
    if (isLink(val)) {
      const linked = prompt[val[0]];
      const returns = linked ? defs[String(linked.class_type)]?.returns : undefined;
      const received = returns?.[val[1]];
      if (typeof spec.type === 'string' && received !== spec.type) {
        errors.push({
          type: 'return_type_mismatch',
          message: 'Return type mismatch between linked nodes',
          details: `${name}, received_type(${received}) mismatch input_type(${spec.type})`,
          extra_info: { input_name: name, received_type: received, linked_node: val },
        });
        continue;
      }
      if (!validateInputs(prompt, val[0], defs, validated).ok) ok = false;
      continue;
    }
    let v = val;
    if (spec.type === 'INT' || spec.type === 'FLOAT') {
      const n = typeof val === 'boolean' ? Number.NaN : Number(val);
      if (val === null || val === '' || !Number.isFinite(n) || (spec.type === 'INT' && typeof val === 'string' && !/^-?\d+$/.test(val.trim()))) {
        errors.push({
          type: 'invalid_input_type',
          message: `Failed to convert an input value to a ${spec.type} value`,
          details: `${name}, ${String(val)}, invalid literal`,
          extra_info: { input_name: name, received_value: val },
        });
        continue;
      }
      v = spec.type === 'INT' ? Math.trunc(n) : n;
      if (spec.min !== undefined && (v as number) < spec.min) {
        errors.push({
          type: 'value_smaller_than_min',
          message: `Value ${String(v)} smaller than min of ${spec.min}`,
          details: name,
          extra_info: { input_name: name, received_value: v },
        });
        continue;
      }
      if (spec.max !== undefined && (v as number) > spec.max) {
        errors.push({
          type: 'value_bigger_than_max',
          message: `Value ${String(v)} bigger than max of ${spec.max}`,
          details: name,
          extra_info: { input_name: name, received_value: v },
        });
        continue;
      }
    }
    if (Array.isArray(spec.type) && !selfChecked.includes(name) && !spec.type.includes(String(v))) {
      const list = spec.type.length > 20 ? `(list of length ${spec.type.length})` : `[${spec.type.map((s) => `'${s}'`).join(', ')}]`;
      errors.push({
        type: 'value_not_in_list',
        message: 'Value not in list',
        details: `${name}: '${String(v)}' not in ${list}`,
        extra_info: { input_name: name, received_value: v },
      });
    }
  }
  if (def.validate && errors.length === 0) {
    const r = def.validate.check(inputs);
    if (r !== true)
      for (const x of def.validate.inputs)
        errors.push({ type: 'custom_validation_failed', message: 'Custom validation failed for node', details: `${x} - ${r}`, extra_info: { input_name: x } });
  }
  const result = { ok: ok && errors.length === 0, errors };
  validated.set(id, result);
  return result;
}

export type Validation =
  | { ok: true; outputs: string[]; nodeErrors: Record<string, unknown> }
  | { ok: false; error: NodeError; nodeErrors: Record<string, unknown> };

/** execution.validate_prompt. */
export function validatePrompt(prompt: unknown, defs: Record<string, NodeDef>): Validation {
  if (!prompt || typeof prompt !== 'object' || Array.isArray(prompt)) {
    return {
      ok: false,
      error: { type: 'invalid_prompt', message: 'Cannot execute because the prompt is not an object.', details: '', extra_info: {} },
      nodeErrors: {},
    };
  }
  const p = prompt as Prompt;
  const outputs: string[] = [];
  for (const [id, node] of Object.entries(p)) {
    if (!node || typeof node.class_type !== 'string') {
      return {
        ok: false,
        error: {
          type: 'invalid_prompt',
          message: 'Cannot execute because a node is missing the class_type property.',
          details: `Node ID '#${id}'`,
          extra_info: {},
        },
        nodeErrors: {},
      };
    }
    const def = defs[node.class_type];
    if (!def) {
      return {
        ok: false,
        error: {
          type: 'missing_node_type',
          message: `Node '${node.class_type}' not found. The custom node may not be installed.`,
          details: `Node ID '#${id}'`,
          extra_info: { node_id: id, class_type: node.class_type },
        },
        nodeErrors: {},
      };
    }
    if (def.output) outputs.push(id);
  }
  if (outputs.length === 0)
    return { ok: false, error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} }, nodeErrors: {} };
  const validated: Validated = new Map();
  const good: string[] = [];
  const nodeErrors: Record<string, { errors: NodeError[]; dependent_outputs: string[]; class_type: string }> = {};
  const lines: string[] = [];
  for (const o of outputs) {
    const r = validateInputs(p, o, defs, validated);
    if (r.ok) {
      good.push(o);
      continue;
    }
    for (const e of r.errors) lines.push(`${e.message}: ${e.details}`);
    for (const [id, v] of validated) {
      if (v.ok || v.errors.length === 0) continue;
      nodeErrors[id] ??= { errors: v.errors, dependent_outputs: [], class_type: String(p[id]!.class_type) };
      nodeErrors[id]!.dependent_outputs.push(o);
    }
  }
  if (good.length === 0) {
    return {
      ok: false,
      error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details: lines.join('\n'), extra_info: {} },
      nodeErrors,
    };
  }
  return { ok: true, outputs: good, nodeErrors };
}
