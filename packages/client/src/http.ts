import { ConnectionError, errorFor, TimeoutError } from './errors.js';
import type { ErrorBody } from './types.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  apiKey: string;
  fetch: FetchLike;
  /** Per request, ms; 0: none. Long-polls get their wait on top. */
  timeoutMs: number;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** A multipart body (an upload), sent as is: fetch sets its content type and boundary. */
  form?: FormData;
  signal?: AbortSignal;
  /** Added to the timeout (long-poll waits). */
  extraTimeoutMs?: number;
  headers?: Record<string, string>;
}

/**
 * Refuses a gateway URL holding a user name or password, without echoing it: fetch would refuse
 * every request with an error quoting the whole URL, password included (G459). The key goes in `apiKey`.
 */
export function checkGatewayUrl(owner: string, option: string, value: string): void {
  const extras = gatewayUrlExtras(value);
  if (extras === undefined) return;
  const example = extras === 'a query string or fragment' ? ' (such as ?key=...)' : '';
  throw new TypeError(`${owner}: ${option} holds ${extras}${example}, which no request may carry; give the gateway's URL without them`);
}

/**
 * What a gateway URL carries that no request may: a user name or password (G459), or a query
 * string or fragment (G466: paths are appended to the URL, so `?key=...` would end up in front of
 * them and be sent, quoted in errors). Undefined for a clean or a relative URL (a page of the
 * gateway's own origin: fetch resolves it). The CLI words its usage errors from it too.
 */
export function gatewayUrlExtras(value: string): 'a user name or password' | 'a query string or fragment' | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return 'a user name or password';
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(value)) return 'a query string or fragment';
  return undefined;
}

/** `Retry-After` as seconds (whole seconds or an HTTP date), or null. */
export function retryAfterSeconds(headers: Headers): number | null {
  const raw = headers.get('retry-after');
  if (raw === null) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

interface Guard {
  signal: AbortSignal | undefined;
  timedOut: () => boolean;
  /** Stops the timer; the caller's signal still aborts the request. */
  stopTimer: () => void;
  /** Stops the timer and unlinks the caller's signal. */
  done: () => void;
}

function combine(signal: AbortSignal | undefined, timeoutMs: number): Guard {
  if (timeoutMs <= 0) return { signal, timedOut: () => false, stopTimer: () => undefined, done: () => undefined };
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new TimeoutError(`no answer within ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = (): void => controller.abort(signal?.reason);
  if (signal?.aborted) controller.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    stopTimer: () => clearTimeout(timer),
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * One request; answers the Response of a 2xx (body unread) with its guard, throws a MediagateError
 * subclass for >= 400, ConnectionError when no answer came, TimeoutError past the timeout, the
 * signal's reason when aborted. The timeout runs until the caller calls `guard.done()` (after the
 * body) or `guard.stopTimer()` (a stream, which may take long; the signal still ends it).
 */
export async function send(http: HttpOptions, url: string, options: CallOptions = {}): Promise<{ response: Response; guard: Guard }> {
  const headers: Record<string, string> = { authorization: `Bearer ${http.apiKey}`, accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const timeout = http.timeoutMs > 0 ? http.timeoutMs + (options.extraTimeoutMs ?? 0) : 0;
  const guard = combine(options.signal, timeout);
  let response: Response;
  try {
    response = await http.fetch(url, {
      method: options.method ?? 'GET',
      headers,
      signal: guard.signal,
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.form !== undefined && { body: options.form }),
    });
  } catch (err) {
    guard.done();
    if (guard.timedOut()) throw new TimeoutError(`${options.method ?? 'GET'} ${url}: no answer within ${timeout} ms`);
    if (options.signal?.aborted) throw options.signal.reason;
    throw new ConnectionError(`${options.method ?? 'GET'} ${url}: ${failureOf(err)}`, { cause: err });
  }
  if (response.status >= 400) {
    try {
      throw await errorFromResponse(response);
    } finally {
      guard.done();
    }
  }
  return { response, guard };
}

export async function errorFromResponse(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  let body: ErrorBody | string = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') body = parsed as ErrorBody;
  } catch {
    /* not JSON: kept as text */
  }
  return errorFor(response.status, body, response.headers.get('x-request-id'), retryAfterSeconds(response.headers), response.headers.get('x-error-code'));
}

/** {@link send}, then the JSON body. */
export async function call<T>(http: HttpOptions, url: string, options: CallOptions = {}): Promise<T> {
  const { response, guard } = await send(http, url, options);
  try {
    return (await response.json()) as T;
  } catch (err) {
    if (guard.timedOut())
      throw new TimeoutError(`${options.method ?? 'GET'} ${url}: the answer did not arrive whole within ${http.timeoutMs + (options.extraTimeoutMs ?? 0)} ms`);
    if (options.signal?.aborted) throw options.signal.reason;
    throw new ConnectionError(`${options.method ?? 'GET'} ${url}: the answer could not be read: ${(err as Error).message}`, { cause: err });
  } finally {
    guard.done();
  }
}

/**
 * What a failed fetch says, with its cause: Node's fetch says only "fetch failed" and keeps why
 * (a refused connection, a name that does not resolve, a TLS failure) in `cause`.
 */
export function failureOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? (err.cause as (Error & { code?: string; errors?: Error[] }) | undefined) : undefined;
  if (!(cause instanceof Error)) return message;
  // several addresses tried (IPv4 and IPv6): an AggregateError whose own message is empty
  const why = cause.message || cause.errors?.map((e) => e.message).join('; ') || cause.code;
  return why ? `${message} (${why})` : message;
}
