/**
 * How an upstream's failures become the gateway's (G89, G97): a refusal caused by the
 * request is an UnrecoverableError (media) or a 400 (chat) with the upstream's reason and field;
 * anything that is the channel's fault (our credentials or credit there, its limits, its faults,
 * the network, an answer that is not the contract's) is a ChannelError, so a create or a chat call
 * moves on to the next candidate and a check is tried again later. Messages may name the provider
 * id; they never carry the upstream's URL, host or key (`Scrub`).
 */
import { AppError, type ErrorCode } from '../../errors.js';
import { isContextLengthError, quote, retryAfterSeconds } from './openai-errors.js';
import { ChannelError, GenerationKeyConflict, UnexpectedReply, UnrecoverableError } from '../types.js';

export type Headers = Record<string, string | string[] | undefined>;

/** Upstream text made safe to quote: the upstream's addresses, signatures and the key removed, one line, bounded. */
export type Scrub = (text: string | undefined) => string;

export function scrubberFor(apiKey: string | undefined, urls: readonly URL[]): Scrub {
  const needles = new Set<string>();
  for (const u of urls) {
    const full = `${u.origin}${u.pathname === '/' ? '' : u.pathname}`;
    for (const n of [full, u.origin, u.host, u.hostname]) if (n.length >= 3) needles.add(n);
  }
  // longest first, so a whole URL goes before its host
  const ordered = [...needles].sort((a, b) => b.length - a.length);
  return (text) => {
    // upstream JSON read without a schema may hold a number or an object where text was expected
    if (typeof text !== 'string' || text === '') return '';
    let t = text;
    for (const n of ordered) t = t.split(n).join('[upstream]');
    t = t.replace(/([?&]sig=)[^&\s"'<>]+/g, '$1[redacted]');
    return quote(withoutHosts(t), apiKey);
  };
}

/**
 * Text without the addresses an upstream names of its own network (G273): a host behind a proxy
 * shares its name or address with the configured one but not its port, so `[upstream]:<port>`
 * loses the port; IP addresses (with or without a port) become `[address]`, and any other
 * `<host name>:<port>` (an internal service, `minio:9000`, `db.internal:5432`) becomes `[host]`.
 */
export function withoutHosts(text: string): string {
  return text
    .replace(/\[upstream\]:\d{1,5}\b/g, '[upstream]')
    .replace(/\[[0-9a-fA-F:.]*:[0-9a-fA-F:.]*\](?::\d{1,5})?/g, '[address]')
    .replace(/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, '[address]')
    .replace(/(?<![\w.@/-])[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*:\d{2,5}\b/g, '[host]');
}

export interface ErrorBodyInfo {
  message: string | undefined;
  param: string | undefined;
  code: string | undefined;
  type: string | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** The reason, field and code of an upstream error body: `{error: {message, type, param, code}}`, the `{code, msg}` envelopes, or text. */
export function readErrorBody(text: string): ErrorBodyInfo {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: text.trim() || undefined, param: undefined, code: undefined, type: undefined };
  }
  return errorInfoOf(json);
}

export function errorInfoOf(json: unknown): ErrorBodyInfo {
  if (!json || typeof json !== 'object') return { message: str(json), param: undefined, code: undefined, type: undefined };
  const o = json as Record<string, unknown>;
  const e = o.error;
  if (e && typeof e === 'object') {
    const eo = e as Record<string, unknown>;
    return { message: str(eo.message) ?? str(eo.msg), param: str(eo.param), code: str(eo.code), type: str(eo.type) };
  }
  return { message: str(e) ?? str(o.msg) ?? str(o.message) ?? str(o.detail), param: str(o.param), code: str(o.code), type: str(o.type) };
}

/** `Retry-After` (seconds or date) or `retry-after-ms` in ms, undefined when the upstream sent neither. */
export function retryAfterMsOf(headers: Headers): number | undefined {
  if (headers['retry-after'] === undefined && headers['retry-after-ms'] === undefined) return undefined;
  return Number(retryAfterSeconds(headers)) * 1000;
}

/** The reason of a refusal with its field: `prompt: prompt is required` is kept as `prompt is required`. */
export function reasonWithField(said: string, param: string | undefined): string {
  if (!param || said.startsWith(param)) return said;
  return `${param}: ${said}`;
}

const relay = (id: string): string => `the relay upstream "${id}"`;

/**
 * A status that is the channel's fault as the gateway error a caller gets when no candidate is
 * left; undefined for a status that is the request's (4xx other than these) or a 2xx. The
 * upstream's `Retry-After` goes with any of them (429, and 503 above all: an upstream mediagate
 * whose own upstreams are all paused answers 503 with it, G91), so the next try waits for it (G121).
 */
export function channelFault(id: string, status: number, headers: Headers, said: string, who = relay(id)): ChannelError | undefined {
  const suffix = said ? `: ${said}` : '';
  const retryAfterMs = retryAfterMsOf(headers);
  const make = (code: ErrorCode, message: string, extra: { headers?: Record<string, string> } = {}) =>
    new ChannelError(message, { code, ...extra, ...(retryAfterMs !== undefined && { retryAfterMs }) });
  if (status === 401 || status === 403 || status === 407) {
    return make('upstream_error', `${who} refused the gateway's credentials (HTTP ${status}); check the apiKey configured for it`);
  }
  if (status === 402) return make('upstream_error', `${who} refused the call: the gateway's account there has no credit left (HTTP 402)`);
  if (status === 408) return make('upstream_timeout', `${who} timed out (HTTP 408)${suffix}`);
  if (status === 429) {
    return make('rate_limited', `${who} is rate limiting the gateway (HTTP 429)${suffix}`, { headers: { 'Retry-After': retryAfterSeconds(headers) } });
  }
  if (status === 421 || status === 423 || status === 425) return make('upstream_error', `${who} could not take the call now (HTTP ${status})${suffix}`);
  if (status >= 500) return make('upstream_error', `${who} failed (HTTP ${status})${suffix}`);
  if (status < 200 || (status >= 300 && status < 400)) {
    return make('upstream_error', `${who} answered HTTP ${status}${status >= 300 ? ' (a redirect: configure the address it redirects to)' : ''}`);
  }
  return undefined;
}

/** A non-2xx answer to a create call. */
export function createFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub): Error {
  const info = readErrorBody(text);
  const said = scrub(info.message);
  const fault = channelFault(id, status, headers, said);
  if (fault) return fault;
  if (status === 409 && info.code === 'idempotency_in_progress') {
    // the upstream is still answering an earlier create of this generation (a retry after a crash): ask again
    const retryAfterMs = retryAfterMsOf(headers) ?? 1000;
    // about this one task, not the channel: it does not count toward the circuit (G272)
    return new ChannelError(
      `${relay(id)} is still creating this task's generation (HTTP 409 idempotency_in_progress); asking again in ${Math.ceil(retryAfterMs / 1000)} s`,
      { retryAfterMs, countsAgainstChannel: false },
    );
  }
  const conflict = `${relay(id)} refused the create with a conflict (HTTP 409${info.code ? ` ${info.code}` : ''})${said ? `: ${said}` : ''}`;
  // this generation's key holds another create there: only a new generation (a new key) goes on (G126)
  if (status === 409 && info.code === 'idempotency_key_reused') return new GenerationKeyConflict(conflict);
  // not the request's fault, and no other channel knows better: another attempt, while attempts remain
  if (status === 409) return new AppError('upstream_error', conflict, { retryable: true });
  const reason = said || `${relay(id)} refused the request (HTTP ${status})`;
  return new UnrecoverableError(reasonWithField(reason, info.param), { ...(info.param !== undefined && { param: info.param }) });
}

/** A non-2xx answer to a status query: a generation the upstream no longer has is failed (a new one may start); anything else, look again later. */
export function queryFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub): { gone: Error } | ChannelError | UnexpectedReply {
  if (status === 404 || status === 410) return { gone: new Error(`${relay(id)} no longer has the generation (HTTP ${status})`) };
  const said = scrub(readErrorBody(text).message);
  // another 4xx is about this one task's query: checked again on the same generation, not the channel's fault (G272)
  return channelFault(id, status, headers, said) ?? new UnexpectedReply(`${relay(id)} refused the status query (HTTP ${status})${said ? `: ${said}` : ''}`);
}

/** The field a chat error message starts with (`messages[1].content[0].type must be ...`), when it names one of the request's. */
export function chatParamOf(message: string | undefined): string | undefined {
  const m =
    /^((?:model|messages|temperature|top_p|stream|max_completion_tokens|stop|presence_penalty|frequency_penalty)(?:\[\d+\]|\.[A-Za-z_]+)*)(?=[\s:,]|$)/.exec(
      message ?? '',
    );
  return m?.[1];
}

/** A non-2xx answer to a chat call (the chat envelope `{code, msg}` or any usual error body). */
export function chatFailure(id: string, status: number, headers: Headers, text: string, scrub: Scrub, upstreamModel: string): AppError {
  const info = readErrorBody(text);
  const said = scrub(info.message);
  const fault = channelFault(id, status, headers, said);
  if (fault) return fault;
  if (isContextLengthError({ message: info.message, code: info.code, type: info.type })) {
    return new AppError('context_length_exceeded', `The conversation is too long for this model${said ? `: ${said}` : ''}`, { param: 'messages' });
  }
  const param = info.param ?? chatParamOf(info.message);
  if (param === 'model' || info.code === 'unknown_model') {
    // the caller's model is valid here; the name the route sends is not known there: the gateway's configuration
    return new AppError(
      'upstream_error',
      `${relay(id)} does not serve model "${upstreamModel}", the name this gateway's route gives it${said ? `: ${said}` : ''}`,
    );
  }
  if (status === 409) return new AppError('upstream_error', `${relay(id)} refused the call with a conflict (HTTP 409)${said ? `: ${said}` : ''}`);
  return new AppError('invalid_request', said || `${relay(id)} refused the request (HTTP ${status})`, { ...(param !== undefined && { param }) });
}

/** Codes of a connection that broke after the call was sent (or while it was being sent). */
const BROKE_AFTER_SENDING = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function errorCodeOf(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const raw = e?.code ?? e?.cause?.code;
  return typeof raw === 'string' && /^[A-Z0-9_]+$/.test(raw) ? raw : '';
}

/**
 * Whether a call failed because its connection broke after it was sent, before the whole answer
 * came (reset, closed): the upstream may have acted on it (G124). A refused connect, an unknown
 * host or a timeout are not this.
 */
export function brokeAfterSending(err: unknown): boolean {
  return err instanceof ChannelError && BROKE_AFTER_SENDING.has(errorCodeOf(err.cause));
}

/** A failure below HTTP (connect, DNS, reset, TLS): the channel's. The node/undici message is not used (it names the host). */
export function transportFailure(id: string, err: unknown, who = relay(id)): ChannelError {
  const code = errorCodeOf(err);
  const opts = { cause: err };
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return new ChannelError(`could not connect to ${who} in time`, { ...opts, code: 'upstream_timeout' });
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new ChannelError(`${who} did not answer in time`, { ...opts, code: 'upstream_timeout' });
  if (code === 'ECONNREFUSED') return new ChannelError(`could not connect to ${who}: connection refused (is it running, and is its address right?)`, opts);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ChannelError(`could not connect to ${who}: its host name does not resolve`, opts);
  if (BROKE_AFTER_SENDING.has(code)) {
    return new ChannelError(`the connection to ${who} broke before its answer was complete (${code})`, opts);
  }
  return new ChannelError(`the call to ${who} failed${code ? ` (${code})` : ''}`, opts);
}

/** The whole call took longer than its bound. */
export function timeoutFailure(id: string, ms: number, who = relay(id)): ChannelError {
  return new ChannelError(`${who} did not answer within ${ms} ms`, { code: 'upstream_timeout' });
}

/**
 * A 2xx answer that is not what the contract says (not JSON, fields missing, a status it does not
 * have): a problem of this one call's reply, not a fault of the channel (G272).
 */
export function malformedReply(id: string, what: string, who = relay(id)): UnexpectedReply {
  return new UnexpectedReply(`${who} answered with ${what}`);
}
