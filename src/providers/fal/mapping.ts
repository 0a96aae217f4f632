/**
 * A request as the input of a fal model, by the model's declared mapping (models.ts,
 * G140): each request field is sent as the input the mapping names (through its table of values,
 * or as it is), accepted as what the model makes anyway (`accept`), or the request is refused
 * naming the field. Caller media go as URLs (`ctx.mediaUrl`): a list, or one URL (`single`).
 */
import { paramFields } from '../../contract/family-request.js';
import { allRefs, type MediaRef } from '../../contract/media-refs.js';
import type { Refusal, RequestedJob } from '../types.js';
import { ruleOf, type FalModelMapping, type FalModels } from './models.js';

export interface FalCall {
  /** The fal model id, sub-path included. */
  model: string;
  input: Record<string, unknown>;
  /** fal input name -> the request field it came from (to name the field of a 422). */
  fieldOfInput: Record<string, string>;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
const said = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const baseOf = (field: string): string => field.replace(/[[.].*$/, '');

/** Caller media by the request field they came in (`image_urls`, `first_image`, ...). */
function mediaByField(job: RequestedJob): Map<string, MediaRef[]> {
  const byField = new Map<string, MediaRef[]>();
  for (const { ref } of allRefs(job.media)) {
    const base = baseOf(ref.field);
    byField.set(base, [...(byField.get(base) ?? []), ref]);
  }
  return byField;
}

/** The mapping of a route's model, or why there is none. */
export function mappingOf(models: FalModels, job: RequestedJob): FalModelMapping | Refusal {
  const mapping = models[job.upstreamModel];
  if (!mapping) return { field: 'model', message: `model ${job.model}: this gateway's fal provider has no input mapping for ${job.upstreamModel}` };
  return mapping;
}

/**
 * The call for a request, or the first field it cannot honour. `mediaUrl` makes the URLs sent
 * (absent when only asking whether the request can be honoured).
 */
export function falCallOf(models: FalModels, job: RequestedJob, mediaUrl: (ref: MediaRef) => string = (r) => r.url): FalCall | Refusal {
  const mapping = mappingOf(models, job);
  if ('field' in mapping) return mapping;
  const model = job.upstreamModel;
  const media = mediaByField(job);
  const input: Record<string, unknown> = { ...(mapping.constants ?? {}) };
  const fieldOfInput: Record<string, string> = {};
  // the mapping names request fields whatever the family: the parameters are read by name
  const params = paramFields(job.params);
  const given = new Set(Object.keys(params).filter((k) => !isEmpty(params[k])));
  for (const base of media.keys()) given.add(base);
  for (const field of given) {
    if (!mapping.inputs[field]) return { field, message: `${field}: the fal model ${model} has no input for it in this gateway's mapping` };
  }
  for (const [field, raw] of Object.entries(mapping.inputs)) {
    const rule = ruleOf(raw);
    const refs = media.get(field);
    if (refs) {
      if (!rule.to) return { field: refs[0]!.field, message: `the fal model ${model} takes no ${field}` };
      const max = rule.single ? 1 : rule.max;
      if (max !== undefined && refs.length > max) return { field: refs[max]!.field, message: `the fal model ${model} takes at most ${max} of ${field}` };
      input[rule.to] = rule.single ? mediaUrl(refs[0]!) : refs.map(mediaUrl);
      fieldOfInput[rule.to] = field;
      continue;
    }
    const value = given.has(field) ? params[field] : rule.default;
    if (value === undefined) continue;
    if (rule.accept && !rule.accept.some((a) => String(a) === String(value))) {
      return { field, message: `${field} ${said(value)}: the fal model ${model} makes ${rule.accept.map(said).join(', ')} only` };
    }
    if (!rule.to) continue;
    if (rule.values) {
      const key = String(value);
      if (!Object.hasOwn(rule.values, key))
        return { field, message: `${field} ${said(value)}: the fal model ${model} takes ${Object.keys(rule.values).join(', ')}` };
      input[rule.to] = rule.values[key];
    } else {
      input[rule.to] = value;
    }
    fieldOfInput[rule.to] = field;
  }
  return { model, input, fieldOfInput };
}
