import type { AnyTask, ErrorBody } from './types.js';

/** Anything the gateway answered with a status of 400 or more: the body as parsed, the status, the request id. */
export class MediagateError extends Error {
  override name = 'MediagateError';
  /** `error.code` of the standard body (`invalid_request`, `task_not_found`...); undefined for the envelopes, whose `code` is the status. */
  readonly code: string | undefined;
  /** `error.param`: the field at fault, when the gateway named one. */
  readonly param: string | null;

  constructor(
    readonly status: number,
    /** The family's error body as parsed (D9), or the text when it was not JSON. */
    readonly body: ErrorBody | string,
    /** The `x-request-id` header of the answer (quote it when reporting a problem). */
    readonly requestId: string | null,
    /** `Retry-After` in seconds, when the answer carried one. */
    readonly retryAfterSeconds: number | null,
  ) {
    super(messageOf(status, body));
    const std = typeof body === 'object' && 'error' in body ? body.error : undefined;
    this.code = std?.code;
    this.param = std?.param ?? null;
  }
}

function messageOf(status: number, body: ErrorBody | string): string {
  if (typeof body === 'string') return `HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ''}`;
  if ('error' in body) return `${status} ${body.error.code}: ${body.error.message}`;
  return `${status}: ${body.msg}`;
}

export class BadRequestError extends MediagateError { override name = 'BadRequestError'; }
export class AuthenticationError extends MediagateError { override name = 'AuthenticationError'; }
export class InsufficientCreditsError extends MediagateError { override name = 'InsufficientCreditsError'; }
export class PermissionDeniedError extends MediagateError { override name = 'PermissionDeniedError'; }
export class NotFoundError extends MediagateError { override name = 'NotFoundError'; }
export class ConflictError extends MediagateError { override name = 'ConflictError'; }
export class PayloadTooLargeError extends MediagateError { override name = 'PayloadTooLargeError'; }
export class RateLimitError extends MediagateError { override name = 'RateLimitError'; }
/** 5xx: a fault of the gateway or of an upstream, never of the request. */
export class ServerError extends MediagateError { override name = 'ServerError'; }

const BY_STATUS: Record<number, typeof MediagateError> = {
  400: BadRequestError, 401: AuthenticationError, 402: InsufficientCreditsError, 403: PermissionDeniedError,
  404: NotFoundError, 409: ConflictError, 413: PayloadTooLargeError, 429: RateLimitError,
};

/** The error class for an HTTP status. */
export function errorFor(status: number, body: ErrorBody | string, requestId: string | null, retryAfterSeconds: number | null): MediagateError {
  const Class = BY_STATUS[status] ?? (status >= 500 ? ServerError : MediagateError);
  return new Class(status, body, requestId, retryAfterSeconds);
}

/** The gateway could not be reached, or the connection broke before an answer. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) { super(message, options); }
}

/** A request took longer than `timeoutMs`, or `waitFor` passed its `timeoutMs`. */
export class TimeoutError extends Error { override name = 'TimeoutError'; }

/** `waitFor` saw the task end `failed`; `task` is its query body (`task.error` says why). */
export class TaskFailedError extends Error {
  override name = 'TaskFailedError';
  constructor(readonly task: AnyTask) { super(`task ${task.id} failed: ${task.error ?? 'no reason given'}`); }
}

/** `waitFor` saw the task end `cancelled` (motion). */
export class TaskCancelledError extends Error {
  override name = 'TaskCancelledError';
  constructor(readonly task: AnyTask) { super(`task ${task.id} was cancelled`); }
}
