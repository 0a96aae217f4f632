/**
 * How answers and failures of an OpenAI-compatible upstream become gateway errors
 * (docs/reference/providers/openai-chat.md#upstream-errors, G50-G59). Messages are written for whoever runs the gateway; they never carry
 * the upstream key (it is scrubbed from any upstream text we quote, and credential errors quote none).
 */
import { AppError } from '../../errors.js';

/** Default `Retry-After` (seconds) when an upstream 429 names none. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

const MAX_QUOTED = 300;

export interface UpstreamErrorInfo {
  message: string | undefined;
  code: string | undefined;
  type: string | undefined;
}

/** The message/code/type of an error body in any of the usual shapes (OpenAI, vLLM, llama.cpp, Ollama). */
export function parseErrorBody(text: string): UpstreamErrorInfo {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: text.trim() || undefined, code: undefined, type: undefined };
  }
  return errorInfoOf(json);
}

export function errorInfoOf(json: unknown): UpstreamErrorInfo {
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
  if (json && typeof json === 'object') {
    const o = json as Record<string, unknown>;
    const e = o.error;
    if (typeof e === 'string') return { message: e, code: str(o.code), type: str(o.type) };
    if (e && typeof e === 'object') {
      const eo = e as Record<string, unknown>;
      return { message: str(eo.message), code: str(eo.code), type: str(eo.type) };
    }
    return { message: str(o.message) ?? str(o.detail), code: str(o.code), type: str(o.type) };
  }
  return { message: undefined, code: undefined, type: undefined };
}

/** Upstream text safe to quote: the key removed, one line, bounded. */
export function quote(text: string | undefined, apiKey: string | undefined): string {
  if (!text) return '';
  let t = text;
  if (apiKey && apiKey.length >= 4) t = t.split(apiKey).join('[redacted]');
  t = t
    .replace(/\b(sk|key|Bearer)[-_ ][A-Za-z0-9_*-]{8,}/g, '$1-[redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > MAX_QUOTED ? `${t.slice(0, MAX_QUOTED)}...` : t;
}

const CONTEXT_RE =
  /context[ _-]?(length|window)|maximum context|max(imum)?[ _-]?(model[ _-]?)?len|too many tokens|prompt is too long|input is too long|exceeds? the (model'?s? )?(maximum|max|context)/i;

export function isContextLengthError(info: UpstreamErrorInfo): boolean {
  if (info.code === 'context_length_exceeded' || info.code === 'string_above_max_length') return true;
  return info.message !== undefined && CONTEXT_RE.test(info.message);
}

/** `Retry-After` (seconds or HTTP date), else `retry-after-ms`, else the default; whole seconds >= 1. */
export function retryAfterSeconds(headers: Record<string, string | string[] | undefined>, now = Date.now()): string {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const ra = first(headers['retry-after'])?.trim();
  if (ra) {
    if (/^\d+(\.\d+)?$/.test(ra)) return String(Math.max(1, Math.ceil(Number(ra))));
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return String(Math.max(1, Math.ceil((at - now) / 1000)));
  }
  const ms = first(headers['retry-after-ms'])?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return String(Math.max(1, Math.ceil(Number(ms) / 1000)));
  return String(DEFAULT_RETRY_AFTER_SECONDS);
}

export interface HttpErrorContext {
  upstream: string;
  /** Our chat model (named in messages instead of the upstream's model). */
  model: string;
  apiKey: string | undefined;
  /** Where the key is configured, for the operator message. */
  keySetting: string;
}

/** A non-2xx upstream answer as a gateway error. */
export function mapHttpError(status: number, headers: Record<string, string | string[] | undefined>, bodyText: string, c: HttpErrorContext): AppError {
  const info = parseErrorBody(bodyText);
  const said = quote(info.message, c.apiKey);
  const suffix = said ? `: ${said}` : '';
  if (status === 401 || status === 403) {
    return new AppError(
      'upstream_error',
      `The chat upstream "${c.upstream}" rejected the gateway's credentials (HTTP ${status}); check the API key configured for it (${c.keySetting}) and that it may use the upstream model mapped to ${c.model}.`,
      { retryable: false },
    );
  }
  if (status === 429) {
    if (info.code === 'insufficient_quota' || info.type === 'insufficient_quota') {
      return new AppError(
        'upstream_error',
        `The chat upstream "${c.upstream}" refused the request: the account has no quota left (HTTP 429 insufficient_quota); check its plan and billing.`,
        { retryable: false },
      );
    }
    return new AppError('rate_limited', `The chat upstream "${c.upstream}" is rate limiting requests for ${c.model}${suffix}`, {
      headers: { 'Retry-After': retryAfterSeconds(headers) },
      retryable: true,
    });
  }
  if ((status === 400 || status === 413 || status === 422) && isContextLengthError(info)) {
    return new AppError('context_length_exceeded', `The conversation is too long for ${c.model}${suffix || '.'}`, { param: 'messages', retryable: false });
  }
  if (status === 408) {
    return new AppError('upstream_timeout', `The chat upstream "${c.upstream}" timed out (HTTP 408)${suffix}`);
  }
  if (status >= 500) {
    return new AppError('upstream_error', `The chat upstream "${c.upstream}" failed (HTTP ${status})${suffix}`, { retryable: true });
  }
  return new AppError('upstream_error', `The chat upstream "${c.upstream}" refused the request (HTTP ${status})${suffix}`, { retryable: false });
}

/** A failure below HTTP (connect, socket, TLS) as a gateway error. */
export function mapTransportError(err: unknown, upstream: string, phase: 'connect' | 'stream'): AppError {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return new AppError('upstream_timeout', `Could not connect to the chat upstream "${upstream}" in time`, { cause: err });
  }
  if (code === 'ECONNREFUSED') {
    return new AppError(
      'upstream_error',
      `Could not connect to the chat upstream "${upstream}": connection refused (is it running and is its baseUrl right?)`,
      { cause: err, retryable: true },
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new AppError('upstream_error', `Could not connect to the chat upstream "${upstream}": its host name does not resolve`, {
      cause: err,
      retryable: true,
    });
  }
  if (phase === 'stream') {
    return new AppError(
      'upstream_error',
      `The connection to the chat upstream "${upstream}" broke before the reply was complete (${code || e?.message || 'closed'})`,
      { cause: err, retryable: true },
    );
  }
  return new AppError('upstream_error', `The request to the chat upstream "${upstream}" failed (${code || e?.message || 'network error'})`, {
    cause: err,
    retryable: true,
  });
}
