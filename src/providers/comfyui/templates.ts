/**
 * ComfyUI workflow templates (G150). A template is an API-format workflow exactly as
 * ComfyUI exports it ("Export (API)": node id -> `{class_type, inputs, _meta}`), left unmodified,
 * and beside it, in providers.json `models`, what it makes and its slots: which node inputs each
 * value of a request is written into, as `"<node id>.<input name>"`:
 *
 * ```json
 * "sdxl": {
 *   "workflow": "workflows/sdxl_api.json", "makes": "image",
 *   "slots": { "prompt": "6.text", "seed": "3.seed", "width": { "to": "5.width", "multiple": 8 }, "height": "5.height" }
 * }
 * ```
 * Slots with a meaning of their own (SPECIAL_SLOTS) take values worked out from the task (its
 * output size, frames, uploaded images); any other slot is named after a request field, whose value
 * is written as the caller gave it. Everything here is checked when providers.json is read: a
 * target that is not an input of the workflow is a configuration error, never a silent no-op.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '../../typebox.js';

export const MAX_REFERENCE_SLOTS = 16;

/** Slots whose value the provider works out from the task; any other slot is a request field's. */
export const SPECIAL_SLOTS = [
  'prompt',
  'seed',
  'width',
  'height',
  'frames',
  'duration',
  'first_frame',
  'last_frame',
  ...Array.from({ length: MAX_REFERENCE_SLOTS }, (_, i) => `reference_image_${i + 1}`),
] as const;

/** The slots of caller images: uploaded to ComfyUI, then written as the file's name. */
export const isMediaSlot = (slot: string): boolean => slot === 'first_frame' || slot === 'last_frame' || slot.startsWith('reference_image_');

const TARGET = '^[^.\\s]+\\.\\S+$';
const Target = Type.String({ pattern: TARGET, description: 'a "<node id>.<input name>" of the workflow' });
const Targets = Type.Union([Target, Type.Array(Target, { minItems: 1, maxItems: 16 })], { description: 'a "<node id>.<input name>", or a list of them' });

export const ComfySlotSpec = Type.Union(
  [
    Targets,
    Type.Object(
      {
        to: Targets,
        multiple: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 1024,
            description: 'width, height, frames: the value is a multiple of this (rounded down; default 8 for width and height)',
          }),
        ),
        plus: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 1024, description: 'frames: the count is a multiple plus this (4n+1 for Wan: multiple 4, plus 1)' }),
        ),
        fps: Type.Optional(
          Type.Number({ exclusiveMinimum: 0, maximum: 240, description: "frames: the frame rate of the workflow's video (default the task's, 24)" }),
        ),
      },
      { additionalProperties: false, description: 'an object { to, multiple?, plus?, fps? }' },
    ),
  ],
  { description: 'a "<node id>.<input name>", a list of them, or { to, multiple?, plus?, fps? }' },
);
export type ComfySlotSpec = Static<typeof ComfySlotSpec>;

export const ComfyTemplateSpec = Type.Object(
  {
    workflow: Type.String({ minLength: 1, description: 'the path of an API-format workflow file (ComfyUI "Export (API)"), relative to providers.json' }),
    makes: Type.Union([Type.Literal('image'), Type.Literal('video')], { description: 'one of image, video: what the workflow makes' }),
    slots: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), ComfySlotSpec, { description: 'an object of slot name -> "<node id>.<input name>"' }),
    outputs: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        maxItems: 64,
        description: "the ids of the nodes whose files are the result (default: every node's)",
      }),
    ),
  },
  { additionalProperties: false, description: 'an object { workflow, makes, slots, outputs? }' },
);
export type ComfyTemplateSpec = Static<typeof ComfyTemplateSpec>;

export const ComfyModels = Type.Record(Type.String({ pattern: '^\\S+$' }), ComfyTemplateSpec, {
  description: "an object of template name (a route's model) -> { workflow, makes, slots, outputs? }",
});
export type ComfyModels = Static<typeof ComfyModels>;

export interface WorkflowNode {
  class_type: string;
  inputs: Record<string, unknown>;
  _meta?: unknown;
}
export type Workflow = Record<string, WorkflowNode>;

export interface SlotTarget {
  node: string;
  input: string;
}

export interface ComfySlot {
  targets: SlotTarget[];
  multiple?: number;
  plus?: number;
  fps?: number;
}

/** A template ready to fill: its workflow read and every slot checked against it. */
export interface ComfyTemplate {
  name: string;
  makes: 'image' | 'video';
  workflow: Workflow;
  slots: Record<string, ComfySlot>;
  /** Nodes whose files are the result; absent: every node's. */
  outputs?: string[];
}

/** A link between nodes in an API workflow: `[node id, output index]`. */
export const isLink = (v: unknown): boolean => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number';

/** Why `json` is not an API-format workflow, or undefined. */
export function workflowProblem(json: unknown): string | undefined {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return 'is not a JSON object of node id -> node';
  const o = json as Record<string, unknown>;
  if (Array.isArray(o.nodes) && 'links' in o) return 'is a ComfyUI UI workflow (it has "nodes" and "links"); export it with "Export (API)"';
  if (o.prompt && typeof o.prompt === 'object' && typeof (o.prompt as { class_type?: unknown }).class_type !== 'string')
    return 'wraps the workflow in "prompt"; give the workflow itself (node id -> node)';
  const ids = Object.keys(o);
  if (ids.length === 0) return 'has no nodes';
  for (const id of ids) {
    const node = o[id] as Partial<WorkflowNode> | null;
    if (!node || typeof node !== 'object' || typeof node.class_type !== 'string' || node.class_type === '') return `node "${id}" has no class_type`;
    if (!node.inputs || typeof node.inputs !== 'object' || Array.isArray(node.inputs)) return `node "${id}" (${node.class_type}) has no inputs object`;
  }
  return undefined;
}

const WIDTH_HEIGHT = new Set(['width', 'height']);

/** The template `name` of `spec` over `workflow`, or the first problem of its slots (a message naming the slot). */
export function templateOf(name: string, spec: Omit<ComfyTemplateSpec, 'workflow'>, workflow: unknown): ComfyTemplate | { problem: string } {
  const wrong = workflowProblem(workflow);
  if (wrong) return { problem: `the workflow ${wrong}` };
  const wf = workflow as Workflow;
  const slots: Record<string, ComfySlot> = {};
  const used = new Map<string, string>();
  for (const [slot, raw] of Object.entries(spec.slots)) {
    const s = typeof raw === 'string' || Array.isArray(raw) ? { to: raw } : raw;
    if (s.multiple !== undefined && !WIDTH_HEIGHT.has(slot) && slot !== 'frames')
      return { problem: `slots.${slot}: "multiple" applies to width, height and frames only` };
    if ((s.plus !== undefined || s.fps !== undefined) && slot !== 'frames') return { problem: `slots.${slot}: "plus" and "fps" apply to frames only` };
    if (/^reference_image_\d+$/.test(slot) && !(SPECIAL_SLOTS as readonly string[]).includes(slot))
      return { problem: `slots.${slot}: reference images are reference_image_1 to reference_image_${MAX_REFERENCE_SLOTS}` };
    const targets: SlotTarget[] = [];
    for (const t of Array.isArray(s.to) ? s.to : [s.to]) {
      const dot = t.indexOf('.');
      const [node, input] = [t.slice(0, dot), t.slice(dot + 1)];
      const n = wf[node];
      if (!n) return { problem: `slots.${slot}: the workflow has no node "${node}"` };
      if (!Object.hasOwn(n.inputs, input))
        return { problem: `slots.${slot}: node "${node}" (${n.class_type}) has no input "${input}" (it has ${Object.keys(n.inputs).join(', ')})` };
      if (isLink(n.inputs[input]))
        return { problem: `slots.${slot}: input "${input}" of node "${node}" (${n.class_type}) is a link from another node, not a value` };
      const other = used.get(t);
      if (other !== undefined) return { problem: `slots.${slot}: "${t}" is also the target of slot ${other}` };
      used.set(t, slot);
      targets.push({ node, input });
    }
    slots[slot] = {
      targets,
      ...(s.multiple !== undefined && { multiple: s.multiple }),
      ...(s.plus !== undefined && { plus: s.plus }),
      ...(s.fps !== undefined && { fps: s.fps }),
    };
  }
  for (const id of spec.outputs ?? []) if (!wf[id]) return { problem: `outputs: the workflow has no node "${id}"` };
  if ((spec.slots.width === undefined) !== (spec.slots.height === undefined))
    return { problem: "slots: width and height go together (the task's size is both)" };
  return { name, makes: spec.makes, workflow: wf, slots, ...(spec.outputs && { outputs: [...spec.outputs] }) };
}

/** Reads a workflow file: its JSON, or why not (a message naming the file). */
export function readWorkflow(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the workflow "${file}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`the workflow "${file}" is not valid JSON: ${(err as Error).message}`);
  }
}

/** The templates of a providers.json `models` object, workflows read relative to `baseDir`; throws naming the entry. */
export function loadTemplates(models: ComfyModels, baseDir: string): Record<string, ComfyTemplate> {
  const out: Record<string, ComfyTemplate> = {};
  for (const [name, spec] of Object.entries(models)) {
    const file = path.resolve(baseDir, spec.workflow);
    let t: ComfyTemplate | { problem: string };
    try {
      t = templateOf(name, spec, readWorkflow(file));
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`);
    }
    if ('problem' in t) throw new Error(`${name}: ${t.problem} (workflow "${spec.workflow}")`);
    out[name] = t;
  }
  return out;
}
