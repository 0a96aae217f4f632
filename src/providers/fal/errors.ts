/**
 * How fal's failures become the gateway's (G142). fal's error bodies are FastAPI's:
 * `{detail: "text"}` or `{detail: [{loc: ["body", "<input>"], msg, type}]}` (a 422). A submit the
 * channel cannot take (401/403: the key or an exhausted balance, 429, 5xx, a model id fal does not
 * know) is a ChannelError, so the start moves on to the next candidate; a model's refusal of its
 * input is only visible on the result (the status says COMPLETED): a 422 naming an input fails the
 * task naming the request field that input came from; a content checker's refusal says so. A
 * model that failed (5xx on the result) is a failed generation (a new one may start). Messages
 * name the provider id, never the upstream's address or key.
 */
import { channelFault, type Headers, type Scrub } from '../toolkit/errors.js';
import { ChannelError, UnexpectedReply, UnrecoverableError } from '../types.js';

export const whoOf = (id: string): string => `the fal upstream "${id}"`;

interface Detail {
  loc: unknown[];
  msg: string;
  type: string;
}

/** The reason and the validation errors of an answer. */
export function detailOf(text: string): { message: string | undefined; errors: Detail[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: text.trim() || undefined, errors: [] };
  }
  const o = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const d = o.detail;
  if (Array.isArray(d)) {
    const errors = d
      .filter((e): e is Detail => !!e && typeof e === 'object' && typeof (e as Detail).msg === 'string')
      .map((e) => ({ loc: Array.isArray(e.loc) ? e.loc : [], msg: e.msg, type: typeof e.type === 'string' ? e.type : '' }));
    return { message: errors[0]?.msg, errors };
  }
  const message = [d, o.error, o.message].find((v): v is string => typeof v === 'string' && v !== '');
  return { message, errors: [] };
}

/** A non-2xx answer to a submit: nothing was queued. */
export function submitFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub, model: string): Error {
  const who = whoOf(id);
  const said = scrub(detailOf(text).message);
  const fault = channelFault(id, status, headers, said, who);
  if (fault) return fault;
  if (status === 404 || status === 405) {
    return new ChannelError(
      `${who} does not serve model "${model}", the fal model id this gateway's route gives it (HTTP ${status})${said ? `: ${said}` : ''}`,
    );
  }
  return resultFailure(id, status, headers, text, scrub, {}, model);
}

/**
 * A non-2xx result of a COMPLETED request: the model refused its input (4xx: the caller's, naming
 * the field), could not make it (5xx, timeouts: a failed generation), or the channel could not
 * answer now (429, 401/403, 502/503: ChannelError, looked at again).
 */
export function resultFailure(
  id: string,
  status: number,
  headers: Headers,
  text: string,
  scrub: Scrub,
  fieldOfInput: Record<string, string>,
  model: string,
): Error {
  const who = whoOf(id);
  const { message, errors } = detailOf(text);
  const said = scrub(message);
  if ([401, 403, 407, 429, 502, 503].includes(status)) return channelFault(id, status, headers, said, who)!;
  if (status === 404 || status === 410) return new Error(`${who} no longer has the result (HTTP ${status})`);
  if (status >= 500 || status === 408) {
    return new Error(`the fal model ${model} failed (HTTP ${status}${headerOf(headers, 'x-fal-error-type')})${said ? `: ${said}` : ''}`);
  }
  const first = errors[0];
  if (first?.type === 'content_policy_violation') {
    const input = inputOf(first.loc);
    const param = input !== undefined ? fieldOfInput[input] : undefined;
    return new UnrecoverableError(`the request was refused by the upstream's content checker (content_policy_violation)${param ? ` on ${param}` : ''}`, {
      param: param ?? 'prompt',
    });
  }
  if (first) {
    const input = inputOf(first.loc);
    const param = input !== undefined ? fieldOfInput[input] : undefined;
    if (param !== undefined) return new UnrecoverableError(`${param}: ${scrub(first.msg)}`, { param });
    // an input no request field is sent as: one this gateway's mapping sets (a constant) or leaves out
    const what = input !== undefined ? `its input ${input} (set by this gateway's mapping, not by a request field)` : 'the request';
    return new UnrecoverableError(`the fal model ${model} refused ${what}: ${scrub(first.msg)}`);
  }
  return new UnrecoverableError(said || `the fal model ${model} refused the request (HTTP ${status})`);
}

/** A non-2xx answer to a status query: a request fal no longer has is a failed generation; anything else, look again. */
export function statusFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub): { gone: Error } | ChannelError | UnexpectedReply {
  const who = whoOf(id);
  if (status === 404 || status === 410) return { gone: new Error(`${who} no longer has the request (HTTP ${status})`) };
  const said = scrub(detailOf(text).message);
  // another 4xx is about this one request's status: checked again on the same generation, not the channel's fault (G272)
  return channelFault(id, status, headers, said, who) ?? new UnexpectedReply(`${who} refused the status query (HTTP ${status})${said ? `: ${said}` : ''}`);
}

function inputOf(loc: unknown[]): string | undefined {
  const parts = loc[0] === 'body' ? loc.slice(1) : loc;
  return typeof parts[0] === 'string' ? parts[0] : undefined;
}

function headerOf(headers: Headers, name: string): string {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s ? ` ${s.replace(/[^\w.-]/g, '')}` : '';
}
