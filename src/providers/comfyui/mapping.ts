/**
 * A request as the values of a template's slots (G152). Each request field is written
 * into the slot it feeds or the request is refused naming the field (G128), never dropped: the
 * prompt (motion: the text of `content`), the task's output size into `width` and `height`, its
 * length into `frames` (duration x fps, snapped to the model's frame rule) or `duration`, the
 * caller's first and last frames and reference images into their image slots (uploaded first), a
 * seed into `seed`, any other field into the slot of its own name as the caller gave it. A slot the
 * request gives nothing keeps the template's value, except `prompt` (an empty text), `seed` (one
 * of this generation's own) and image slots (the request is refused: a LoadImage needs a file).
 */
import { paramFields } from '../../contract/family-request.js';
import { allRefs, type MediaRef } from '../../contract/media-refs.js';
import { adaptiveVideoSize } from '../../contract/output.js';
import type { Refusal, RequestedJob } from '../types.js';
import { isMediaSlot, SPECIAL_SLOTS, type ComfySlot, type ComfyTemplate, type Workflow } from './templates.js';

/** What a request gives the slots of a template. */
export interface ComfyBinding {
  /** Values of the slots, except caller images and a seed the caller left to chance. */
  values: Record<string, unknown>;
  /** Caller images by slot: uploaded to ComfyUI, then written as the uploaded file's name. */
  media: Record<string, MediaRef>;
  /** The request field each bound slot came from (to name it when ComfyUI refuses the value). */
  fieldOfSlot: Record<string, string>;
}

/** Fields that set the task's output size (its width and height). */
const SHAPE_FIELDS = ['size', 'aspect_ratio', 'ratio', 'resolution'];

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
const said = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const baseOf = (field: string): string => field.replace(/[[.].*$/, '');
const plural = (kind: string): string => (kind === 'image' ? 'images' : `${kind}s`);

/** The field a caller would fill to give a medium the template needs (`model` where the family has none). */
function fieldFor(job: RequestedJob, slot: string): string {
  if (job.family === 'motion') return 'content';
  const frames =
    job.family === 'videos' ? ['image', 'lastFrameImage'] : job.family === 'clip' || job.family === 'model-center' ? ['first_image', 'last_image'] : undefined;
  if (slot === 'first_frame' || slot === 'last_frame') return frames?.[slot === 'first_frame' ? 0 : 1] ?? 'model';
  const given = job.media.images[0]?.field;
  if (given) return baseOf(given);
  return job.family === 'videos' ? 'referenceImages' : job.family === 'model-center' ? 'reference_images' : 'image_urls';
}

function needs(slot: string): string {
  if (slot === 'first_frame') return 'a first frame';
  if (slot === 'last_frame') return 'a last frame';
  return `${slot.slice('reference_image_'.length)} reference image(s)`;
}

/** `v` rounded down to a multiple of `m` (at least `m`). */
export const snapDown = (v: number, m: number): number => Math.max(m, Math.floor(v / m) * m);

/** Frames for `seconds` at the slot's rate, the nearest count of the form n x multiple + plus (at least 1). */
export function framesFor(seconds: number, slot: ComfySlot, taskFps: number): number {
  const fps = slot.fps ?? taskFps;
  const [m, p] = [slot.multiple ?? 1, slot.plus ?? 0];
  const k = Math.max(0, Math.round((Math.max(1, Math.round(seconds * fps)) - p) / m));
  const n = k * m + p;
  return n >= 1 ? n : m + p;
}

/** The pixel size the task must have: its output's, or for an `adaptive` video the first frame's aspect. */
function sizeOf(job: RequestedJob): { width: number; height: number } {
  const o = job.output;
  const facts = job.media.firstFrame?.facts;
  if (o.kind === 'video' && o.adaptiveResolution && facts?.width && facts.height) return adaptiveVideoSize(o.adaptiveResolution, facts.width, facts.height);
  return { width: o.width, height: o.height };
}

/** What the request gives the template's slots, or the first field the template cannot honour. */
export function bindingOf(t: ComfyTemplate, job: RequestedJob): ComfyBinding | Refusal {
  const name = `the ComfyUI template "${t.name}"`;
  const refuse = (field: string, message: string): Refusal => ({ field, message });
  if (job.output.kind !== t.makes) return refuse('model', `model ${job.model} makes ${plural(job.output.kind)}; ${name} makes ${plural(t.makes)}`);
  const has = (slot: string): boolean => t.slots[slot] !== undefined;
  const b: ComfyBinding = { values: {}, media: {}, fieldOfSlot: {} };
  const bind = (slot: string, value: unknown, field: string): void => {
    b.values[slot] = value;
    b.fieldOfSlot[slot] = field;
  };

  const m = job.media;
  const other = [...m.videos, ...m.audios][0];
  if (other) return refuse(other.field, `${name} takes caller images only (first and last frames, reference images)`);
  const images: Array<[string, MediaRef | undefined]> = [
    ['first_frame', m.firstFrame],
    ['last_frame', m.lastFrame],
    ...m.images.map((r, i) => [`reference_image_${i + 1}`, r] as [string, MediaRef]),
  ];
  for (const [slot, ref] of images) {
    if (!ref) continue;
    if (!has(slot)) {
      const refs = Object.keys(t.slots).filter((s) => s.startsWith('reference_image_')).length;
      const why = slot.startsWith('reference_image_') ? `${name} takes ${refs} reference image${refs === 1 ? '' : 's'}` : `${name} has no ${slot} slot`;
      return refuse(ref.field, why);
    }
    b.media[slot] = ref;
    b.fieldOfSlot[slot] = ref.field;
  }
  for (const slot of Object.keys(t.slots)) {
    if (isMediaSlot(slot) && !b.media[slot]) {
      const field = fieldFor(job, slot);
      return refuse(field, `${name} needs ${needs(slot)} (its ${slot} slot)`);
    }
  }

  const mediaFields = new Set(allRefs(m).map(({ ref }) => baseOf(ref.field)));
  let prompt: { text: string; field: string } | undefined;
  let shapeField: string | undefined;
  // slots are named by request field whatever the family: the parameters are read by name
  for (const [key, value] of Object.entries(paramFields(job.params))) {
    if (isEmpty(value)) continue;
    if (key === 'content' && Array.isArray(value)) {
      // motion: the text items are the prompt; its images came as media above
      const text = value
        .filter((c): c is { type: 'text'; text: string } => !!c && c.type === 'text' && typeof c.text === 'string')
        .map((c) => c.text)
        .join('\n');
      if (text) prompt = { text, field: 'content' };
      continue;
    }
    if (mediaFields.has(key)) continue;
    if (key === 'prompt') {
      prompt = { text: String(value), field: 'prompt' };
      continue;
    }
    if (SHAPE_FIELDS.includes(key)) {
      if (!has('width')) return refuse(key, `${key} ${said(value)}: ${name} makes one size (it has no width and height slots)`);
      shapeField ??= key;
      continue;
    }
    if (key === 'duration') {
      if (!has('frames') && !has('duration')) return refuse(key, `duration ${said(value)}: ${name} makes one length (it has no frames or duration slot)`);
      continue;
    }
    if (key === 'seed') {
      if (value === -1) continue; // the contract's "random"
      if (!has('seed')) return refuse(key, `seed ${said(value)}: ${name} has no seed slot`);
      bind('seed', value, 'seed');
      continue;
    }
    if (key === 'service_tier') continue; // the gateway's own billing tier: nothing to ask of the workflow
    if (has(key) && !(SPECIAL_SLOTS as readonly string[]).includes(key)) {
      bind(key, value, key);
      continue;
    }
    // what a workflow without such a slot does anyway: no sound, no watermark, one result
    if ((key === 'generate_audio' || key === 'watermark') && value === false) continue;
    if (key === 'n' && Number(value) === 1) continue;
    return refuse(key, `${key} ${said(value)}: ${name} has no slot for it`);
  }

  if (prompt && !has('prompt')) return refuse(prompt.field, `${name} has no prompt slot`);
  if (has('prompt')) bind('prompt', prompt?.text ?? '', prompt?.field ?? 'prompt');
  if (has('width')) {
    const size = sizeOf(job);
    bind('width', snapDown(size.width, t.slots.width!.multiple ?? 8), shapeField ?? 'size');
    bind('height', snapDown(size.height, t.slots.height!.multiple ?? 8), shapeField ?? 'size');
  }
  if (job.output.kind === 'video') {
    if (has('frames')) bind('frames', framesFor(job.output.durationSec, t.slots.frames!, job.output.fps), 'duration');
    if (has('duration')) bind('duration', job.output.durationSec, 'duration');
  }
  return b;
}

/**
 * The workflow to queue: the template's, each bound slot's value written into its inputs, caller
 * images as the names they were uploaded under, `seed` (when the caller gave none) as this
 * generation's. Also which request field each written input came from (`"6.text"` -> `prompt`).
 */
export function workflowOf(
  t: ComfyTemplate,
  b: ComfyBinding,
  uploaded: Record<string, string>,
  seed: number,
): { workflow: Workflow; fieldOfInput: Record<string, string> } {
  const workflow = structuredClone(t.workflow);
  const fieldOfInput: Record<string, string> = {};
  const values: Record<string, unknown> = { ...b.values, ...uploaded };
  if (t.slots.seed && values.seed === undefined) values.seed = seed;
  for (const [slot, value] of Object.entries(values)) {
    for (const { node, input } of t.slots[slot]?.targets ?? []) {
      workflow[node]!.inputs[input] = value;
      fieldOfInput[`${node}.${input}`] = b.fieldOfSlot[slot] ?? slot;
    }
  }
  return { workflow, fieldOfInput };
}
