/**
 * Calls to the gateway, relative to the page (G364): `/console/` -> `../v1/...`, so the console
 * works under any path prefix. The session cookie authenticates them; changes send the session's
 * CSRF token (G362). No key is ever kept here.
 */
import type { ConsoleSession, SignInBody } from '../../src/contract/console.js';
import type { TaskQueryReply } from '../../src/contract/task-replies.js';

export type { ConsoleSession };

/** The gateway's root as seen by the browser (the page is `<root>/console/`). */
export const ROOT = new URL('../', document.baseURI);

/**
 * The event that brings the sign-in back; `detail.expired` when a request found the session ended
 * (a 401), so the sign-in says so.
 */
export const SIGNED_OUT = 'mediagate:signed-out';

let csrfToken = '';
export function setCsrf(token: string): void {
  csrfToken = token;
}

export const url = (path: string): string => new URL(path.replace(/^\//, ''), ROOT).toString();

/** The statuses a task ends in. */
export const isFinished = (status: string): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/**
 * Follows a task's status stream (`GET /v1/tasks/{id}/events`): `onTask` with the task at each
 * change of status or progress, the stream closed after a finished one; `onError` with the
 * gateway's message when it ends the stream with an error (a lost connection EventSource tries
 * again by itself). Returns what closes the stream.
 */
export function followTask(id: string, onTask: (task: TaskQueryReply) => void, onError: (message: string) => void): () => void {
  const source = new EventSource(url(`/v1/tasks/${encodeURIComponent(id)}/events`), { withCredentials: true });
  source.onmessage = (e) => {
    const task = JSON.parse(e.data as string) as TaskQueryReply;
    if (isFinished(task.status)) source.close();
    onTask(task);
  };
  source.addEventListener('error', (e) => {
    const data = (e as MessageEvent).data as string | undefined;
    if (data) {
      let message = data;
      try {
        message = (JSON.parse(data) as { error?: { message?: string } }).error?.message ?? data;
      } catch {
        /* not JSON: the text is the message */
      }
      onError(message);
    }
    if (data || source.readyState === EventSource.CLOSED) source.close();
  });
  return () => source.close();
}

/** An error answer of the gateway: its status, catalog code, message and the field it names. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | undefined,
  ) {
    super(message);
  }
}

/**
 * No answer at all: the gateway is down or the network failed (fetch's own TypeError, "Failed to
 * fetch", replaced by what it means here).
 */
export class UnreachableError extends Error {
  constructor() {
    super('Cannot reach the gateway');
  }
}

/** `fetch`, its network failure an {@link UnreachableError} (an abort stays an abort). */
async function send(input: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (err) {
    if (err instanceof TypeError) throw new UnreachableError();
    throw err;
  }
}

/** The message, code and field of any of the gateway's error bodies (standard, videos, chat). */
async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON: the text is the message */
  }
  const err = (typeof body.error === 'object' && body.error !== null ? body.error : body) as Record<string, unknown>;
  const code = res.headers.get('x-error-code') ?? (typeof err.code === 'string' ? err.code : 'error');
  const message = typeof err.message === 'string' ? err.message : typeof body.msg === 'string' ? body.msg : text || res.statusText;
  const param = typeof err.param === 'string' ? err.param : undefined;
  return new ApiError(res.status, code, message, param);
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One JSON call; throws {@link ApiError} on an error answer. */
export async function api<T>(method: Method, path: string, body?: unknown, init: RequestInit = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await send(url(path), { method, headers, credentials: 'same-origin', ...(payload !== undefined && { body: payload }), ...init });
  if (!res.ok) {
    const err = await errorOf(res);
    // the session ended (expiry, sign-out elsewhere, key revoked): back to the sign-in, which says why
    if (res.status === 401 && path !== 'console/session') window.dispatchEvent(new CustomEvent(SIGNED_OUT, { detail: { expired: true } }));
    throw err;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A streamed POST (chat): the response, after the status is checked. */
export async function stream(path: string, body: unknown, signal: AbortSignal): Promise<Response> {
  const res = await send(url(path), {
    method: 'POST',
    signal,
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-csrf-token': csrfToken },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await errorOf(res);
  return res;
}

export const signIn = (apiKey: string): Promise<ConsoleSession> => api<ConsoleSession>('POST', 'console/session', { api_key: apiKey } satisfies SignInBody);
export const currentSession = (): Promise<ConsoleSession> => api<ConsoleSession>('GET', 'console/session');
export const signOut = (): Promise<void> => api<void>('DELETE', 'console/session');

/** Dates of Unix seconds, as the page shows them. */
export const when = (seconds: number | null | undefined): string =>
  seconds == null
    ? '-'
    : new Date(seconds * 1000)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
