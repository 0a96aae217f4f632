/**
 * How the Images API's failures become the gateway's (G131). A prompt or image the
 * upstream's safety system refused (`moderation_blocked`, `content_policy_violation`) fails the task
 * with a message saying so; any other refusal caused by the request fails it with the upstream's
 * reason, naming the request field; anything that is the channel's fault (credentials, quota,
 * limits, its faults, a model name the route gets wrong, an answer that is not the API's) is a
 * ChannelError, so the start moves on to the next candidate. Messages name the provider id, never
 * the upstream's address or key (`Scrub`).
 */
import type { MediaRef } from '../../contract/media-refs.js';
import { channelFault, readErrorBody, reasonWithField, type Headers, type Scrub } from '../toolkit/errors.js';
import { ChannelError, UnrecoverableError } from '../types.js';

export const whoOf = (id: string): string => `the OpenAI Images upstream "${id}"`;

const SAFETY_CODES = new Set(['moderation_blocked', 'content_policy_violation']);

/** The request field an upstream `param` is about: `image[1]` is the second reference image's field. */
export function fieldOfParam(param: string | undefined, images: readonly MediaRef[]): string | undefined {
  if (param === undefined) return undefined;
  const m = /^image(?:\[(\d*)\])?$/.exec(param);
  if (m) return images[Number(m[1] || 0)]?.field ?? images[0]?.field ?? 'image_urls';
  return param;
}

/** A non-2xx answer to a generation or edit. */
export function imagesFailure(
  id: string,
  status: number,
  headers: Headers,
  text: string,
  scrub: Scrub,
  images: readonly MediaRef[],
  upstreamModel: string,
): Error {
  const who = whoOf(id);
  const info = readErrorBody(text);
  const said = scrub(info.message);
  if (status === 429 && (info.code === 'insufficient_quota' || info.type === 'insufficient_quota')) {
    return new ChannelError(`${who} refused the call: the gateway's account there has no quota left (HTTP 429 insufficient_quota); check its plan and billing`);
  }
  const fault = channelFault(id, status, headers, said, who);
  if (fault) return fault;
  if (SAFETY_CODES.has(info.code ?? '') || SAFETY_CODES.has(info.type ?? '')) {
    return new UnrecoverableError(`the prompt was refused by the upstream's safety system (${info.code ?? info.type})`, { param: 'prompt' });
  }
  if (status === 404 || info.param === 'model' || info.code === 'model_not_found') {
    // the caller's model is valid; the name this gateway's route sends is not known there
    return new ChannelError(
      `${who} does not serve model "${upstreamModel}", the name this gateway's route gives it (HTTP ${status})${said ? `: ${said}` : ''}`,
    );
  }
  const param = fieldOfParam(info.param, images);
  const reason = said || `${who} refused the request (HTTP ${status})`;
  return new UnrecoverableError(reasonWithField(reason, param), { ...(param !== undefined && { param }) });
}
