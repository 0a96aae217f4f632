/**
 * How Replicate's failures become the gateway's (G136). Its errors are problem+json
 * (`{title, detail, status}`, 422 with `invalid_fields: [{type, field, description}]`). An input the
 * model refuses that a request field maps to fails the task naming that field; anything that is the
 * channel's fault is a ChannelError, so the start moves on to the next candidate and a check is
 * tried again later: 401/403 (the token), 402 (the account's credit), 429 (with its Retry-After),
 * 5xx, a model or version that is not there (404) or a refusal of what the mapping itself sends
 * (a constant, an input the model requires that nothing maps to): the operator's providers.json.
 * Messages name the provider id, never the upstream's address or token (`Scrub`).
 */
import { channelFault, readErrorBody, type Headers, type Scrub } from '../toolkit/errors.js';
import { ChannelError, UnrecoverableError } from '../types.js';
import type { PredictionCall } from './mapping.js';
import { labelOf } from './models.js';

export const whoOf = (id: string): string => `the Replicate upstream "${id}"`;

interface InvalidField {
  type?: string;
  field?: string;
  description?: string;
}

/** `invalid_fields` of a 422 problem, when there are any. */
function invalidFieldsOf(text: string): InvalidField[] {
  try {
    const json = JSON.parse(text) as { invalid_fields?: unknown };
    return Array.isArray(json.invalid_fields) ? json.invalid_fields.filter((f): f is InvalidField => !!f && typeof f === 'object') : [];
  } catch {
    return [];
  }
}

/** A non-2xx answer to a create. */
export function createFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub, call: PredictionCall, upstreamModel: string): Error {
  const who = whoOf(id);
  const said = scrub(readErrorBody(text).message);
  const fault = channelFault(id, status, headers, said, who);
  if (fault) return fault;
  const label = labelOf(call.spec);
  if (status === 404)
    return new ChannelError(`${who} has no model ${label} (route model "${upstreamModel}", HTTP 404); check its models entry in providers.json`);
  if (status === 422) {
    for (const f of invalidFieldsOf(text)) {
      const name = /^input\.([A-Za-z0-9_]+)/.exec(f.field ?? '')?.[1];
      const field = name === undefined ? undefined : call.fieldOfInput[name];
      if (field !== undefined) return new UnrecoverableError(`${field}: ${scrub(f.description) || `${label} refused it`}`, { param: field });
    }
    // what the mapping itself sends (constants, a required input nothing maps to, the version): the configuration's
    return new ChannelError(
      `${who} refused the input this gateway's mapping for "${upstreamModel}" sends to ${label} (HTTP 422)${said ? `: ${said}` : ''}; check its models entry in providers.json`,
    );
  }
  return new UnrecoverableError(said || `${who} refused the request (HTTP ${status})`);
}

/** A non-2xx answer to a look at a prediction: one the upstream no longer has is failed; anything else, look again later. */
export function checkFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub): { gone: Error } | ChannelError {
  const who = whoOf(id);
  if (status === 404 || status === 410) return { gone: new Error(`${who} no longer has the prediction (HTTP ${status})`) };
  const said = scrub(readErrorBody(text).message);
  return channelFault(id, status, headers, said, who) ?? new ChannelError(`${who} refused the prediction query (HTTP ${status})${said ? `: ${said}` : ''}`);
}

/** What a safety checker says when it holds an output back (Flux, SDXL: "NSFW content detected"). */
const SAFETY = /\bnsfw\b|safety (checker|filter|system)|flagged as sensitive|content (policy|moderation)/i;

/**
 * The error of a prediction that ended `failed`: a safety refusal fails the task (the caller's
 * prompt or media); any other failure (the model crashed, ran out of memory, timed out) may be
 * tried again as a new generation.
 */
export function predictionFailure(id: string, error: unknown, scrub: Scrub): Error {
  const said = scrub(typeof error === 'string' ? error : error == null ? '' : JSON.stringify(error));
  if (SAFETY.test(said)) return new UnrecoverableError(`the output was held back by the upstream model's safety checker: ${said}`, { param: 'prompt' });
  return new Error(`${whoOf(id)}: the prediction failed${said ? `: ${said}` : ''}`);
}
