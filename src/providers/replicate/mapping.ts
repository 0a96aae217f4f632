/**
 * A request as the input of a Replicate model, by the model's declared mapping (models.ts,
 * G135): each request field is translated into the input the mapping names, or the
 * request is refused naming the field (G128). Caller media are sent as URLs the upstream fetches
 * (`ctx.mediaUrl`: the caller's URL, or a signed URL of an uploaded asset).
 */
import { paramFields } from '../../contract/family-request.js';
import { allRefs, type MediaRef } from '../../contract/media-refs.js';
import type { Refusal, RequestedJob } from '../types.js';
import { labelOf, type ReplicateInputSpec, type ReplicateModelSpec, type ReplicateModelsSpec } from './models.js';

export interface PredictionCall {
  spec: ReplicateModelSpec;
  input: Record<string, unknown>;
  /** Request field of each input the request sent (to name it when the model refuses that input). */
  fieldOfInput: Record<string, string>;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The mapping entry of the route's model name, or why there is none. */
export function specOf(models: ReplicateModelsSpec, job: RequestedJob): ReplicateModelSpec | Refusal {
  const spec = models[job.upstreamModel];
  if (!spec) return { field: 'model', message: `model ${job.model}: this replicate provider has no mapping for "${job.upstreamModel}"` };
  if (spec.output !== job.output.kind)
    return {
      field: 'model',
      message: `model ${job.model} makes ${job.output.kind === 'image' ? 'images' : `${job.output.kind}s`}; ${labelOf(spec)} makes ${spec.output === 'image' ? 'images' : `${spec.output}s`}`,
    };
  return spec;
}

/** The prediction input of a request, or why the model cannot take it. */
export function predictionCallOf(models: ReplicateModelsSpec, job: RequestedJob, mediaUrl: (ref: MediaRef) => string = (r) => r.url): PredictionCall | Refusal {
  const spec = specOf(models, job);
  if ('field' in spec) return spec;
  const refs = new Map(allRefs(job.media).map(({ ref }) => [ref.field, ref]));
  const urlOf = (field: string, value: unknown): unknown => {
    const ref = refs.get(field) ?? refs.get(`${field}[0]`);
    return ref && (ref.url === value || (Array.isArray(value) && value[0] === ref.url)) ? mediaUrl(ref) : value;
  };
  const input: Record<string, unknown> = { ...spec.constants };
  const fieldOfInput: Record<string, string> = {};
  const put = (field: string, value: unknown, how: ReplicateInputSpec): Refusal | undefined => {
    const name = typeof how === 'string' ? how : how.name;
    let sent = value;
    if (typeof how !== 'string' && how.values !== undefined) {
      const key = show(value);
      if (!Object.hasOwn(how.values, key)) return { field, message: `${field} ${key}: ${labelOf(spec)} takes ${Object.keys(how.values).join(', ')} here` };
      sent = how.values[key];
      if (sent === null) return undefined;
    }
    if (name === undefined) return undefined;
    input[name] = sent;
    fieldOfInput[name] = field;
    return undefined;
  };
  // the mapping names request fields whatever the family: the parameters are read by name
  for (const [key, value] of Object.entries(paramFields(job.params))) {
    if (isEmpty(value)) continue;
    const whole = spec.input[key];
    if (whole !== undefined) {
      const sent = Array.isArray(value) ? value.map((v, i) => urlOf(`${key}[${i}]`, v)) : urlOf(key, value);
      const refused = put(key, sent, whole);
      if (refused) return refused;
      continue;
    }
    const items = Array.isArray(value) ? value : [value];
    for (const [i, item] of items.entries()) {
      const field = `${key}[${i}]`;
      const how = spec.input[field];
      const named = Array.isArray(value) ? field : key;
      if (how === undefined) return { field: named, message: `${labelOf(spec)} has no input for ${named} (model ${job.model})` };
      const refused = put(named, urlOf(field, item), how);
      if (refused) return refused;
    }
  }
  return { spec, input, fieldOfInput };
}
