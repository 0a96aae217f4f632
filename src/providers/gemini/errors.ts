/**
 * How the Gemini API's failures become the gateway's (G147). Its errors are google.rpc
 * Status bodies, `{error: {code, message, status, details}}`. The channel's faults are
 * ChannelErrors (the start moves on to the next candidate; a check looks again later): 401/403
 * PERMISSION_DENIED, a key the API does not know (which it answers 400 INVALID_ARGUMENT with
 * `ErrorInfo.reason: API_KEY_INVALID`, a trap), 400 FAILED_PRECONDITION (the account's region or
 * billing), 429 RESOURCE_EXHAUSTED (its `RetryInfo.retryDelay` kept for the wait), 5xx, 404 (the
 * route's model name). Any other 4xx is the request's: an UnrecoverableError naming the request
 * field the upstream's field path is about. Messages name the provider id, never its address or key.
 */
import { channelFault, type Headers, type Scrub } from '../toolkit/errors.js';
import { ChannelError, UnexpectedReply, UnrecoverableError } from '../types.js';

export const whoOf = (id: string): string => `the Gemini API upstream "${id}"`;

interface StatusDetail {
  '@type'?: string;
  reason?: string;
  retryDelay?: string;
  fieldViolations?: { field?: string; description?: string }[];
}

export interface RpcStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: StatusDetail[];
}

export function rpcStatusOf(text: string): RpcStatus {
  try {
    const e = (JSON.parse(text) as { error?: unknown } | null)?.error;
    return e && typeof e === 'object' ? (e as RpcStatus) : {};
  } catch {
    return { message: text.trim().slice(0, 200) };
  }
}

const detail = (s: RpcStatus, type: string): StatusDetail | undefined =>
  Array.isArray(s.details) ? s.details.find((d) => typeof d?.['@type'] === 'string' && d['@type'].endsWith(`google.rpc.${type}`)) : undefined;

/** `RetryInfo.retryDelay` ("37s", "1.5s") in ms. */
export function retryDelayMsOf(s: RpcStatus): number | undefined {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(detail(s, 'RetryInfo')?.retryDelay ?? '');
  return m ? Math.ceil(Number(m[1]) * 1000) : undefined;
}

/** The request field an upstream field path or message is about (`generation_config.image_config.aspect_ratio` -> `size`). */
const FIELD_RULES: readonly [RegExp, (fields: FieldNames) => string | undefined][] = [
  [/aspect_?ratio/i, (f) => f.aspect],
  [/image_?size|resolution/i, () => 'resolution'],
  [/duration_?seconds|durationSeconds/i, () => 'duration'],
  [/last_?frame/i, (f) => f.lastFrame],
  [/reference_?images/i, (f) => f.references],
  [/instances\[0\]\.image|inline_?data|\bimage\b/i, (f) => f.image],
  [/prompt/i, () => 'prompt'],
];

export interface FieldNames {
  aspect: string;
  image?: string | undefined;
  lastFrame?: string | undefined;
  references?: string | undefined;
}

export function fieldOf(s: RpcStatus, names: FieldNames): string | undefined {
  const texts = [...(detail(s, 'BadRequest')?.fieldViolations?.map((v) => v.field ?? '') ?? []), s.message ?? ''];
  for (const t of texts) for (const [re, pick] of FIELD_RULES) if (re.test(t)) return pick(names);
  return undefined;
}

const KEY_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_SERVICE_BLOCKED', 'API_KEY_HTTP_REFERRER_BLOCKED', 'API_KEY_IP_ADDRESS_BLOCKED']);

/** A non-2xx answer to a generateContent or predictLongRunning call. */
export function callFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub, upstreamModel: string, names: FieldNames): Error {
  const who = whoOf(id);
  const s = rpcStatusOf(text);
  const said = scrub(s.message);
  const reason = detail(s, 'ErrorInfo')?.reason;
  if (reason !== undefined && KEY_REASONS.has(reason)) {
    return new ChannelError(`${who} refused the gateway's credentials (HTTP ${status} ${reason}); check the apiKey configured for it`);
  }
  if (status === 429) {
    const retryAfterMs = retryDelayMsOf(s);
    return new ChannelError(
      `${who} is rate limiting the gateway or its quota is used up (HTTP 429${s.status ? ` ${s.status}` : ''})${said ? `: ${said}` : ''}`,
      {
        code: 'rate_limited',
        ...(retryAfterMs !== undefined && { retryAfterMs, headers: { 'Retry-After': String(Math.ceil(retryAfterMs / 1000)) } }),
      },
    );
  }
  const fault = channelFault(id, status, headers, said, who);
  if (fault) return fault;
  if (s.status === 'FAILED_PRECONDITION')
    return new ChannelError(`${who} cannot serve the gateway's account now (HTTP ${status} FAILED_PRECONDITION)${said ? `: ${said}` : ''}`);
  if (status === 404)
    return new ChannelError(`${who} does not serve model "${upstreamModel}", the name this gateway's route gives it (HTTP 404)${said ? `: ${said}` : ''}`);
  const param = fieldOf(s, names);
  const why = said || `${who} refused the request (HTTP ${status}${s.status ? ` ${s.status}` : ''})`;
  return new UnrecoverableError(param && !why.startsWith(param) ? `${param}: ${why}` : why, { ...(param !== undefined && { param }) });
}

/** A non-2xx answer to an operation query: a name the API no longer knows ends the generation (a new one may start); anything else, look again later. */
export function operationQueryFailure(
  id: string,
  status: number,
  headers: Headers,
  text: string,
  scrub: Scrub,
): { gone: Error } | ChannelError | UnexpectedReply {
  const who = whoOf(id);
  const s = rpcStatusOf(text);
  const said = scrub(s.message);
  if (status === 404) return { gone: new Error(`${who} no longer has the generation (HTTP 404)`) };
  if (status === 429) {
    const retryAfterMs = retryDelayMsOf(s);
    return new ChannelError(`${who} is rate limiting the gateway (HTTP 429)${said ? `: ${said}` : ''}`, {
      code: 'rate_limited',
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
  // another 4xx is about this one operation: checked again on the same generation, not the channel's fault (G272)
  return channelFault(id, status, headers, said, who) ?? new UnexpectedReply(`${who} refused the operation query (HTTP ${status})${said ? `: ${said}` : ''}`);
}
