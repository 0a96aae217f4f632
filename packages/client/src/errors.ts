import type { AnyTask, ErrorBody } from './types.js';

/** Anything the gateway answered with a status of 400 or more: the body as parsed, the status, the request id. */
export class MediagateError extends Error {
  override name = 'MediagateError';
  /**
   * The error's code in the gateway's catalog (`invalid_request`, `model_not_allowed`...): the
   * standard body's `error.code`, else the `x-error-code` header (the videos and chat envelopes
   * carry only the status as their `code`); undefined when the gateway sent neither.
   */
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
    /** The `x-error-code` header, when the answer carried one. */
    headerCode: string | null = null,
  ) {
    const std = typeof body === 'object' && 'error' in body ? body.error : undefined;
    const code = std?.code ?? headerCode ?? undefined;
    super(messageOf(status, body, code));
    this.code = code;
    this.param = std?.param ?? null;
  }
}

/** `<status> <code>: <message>`, the code from the body or the `x-error-code` header (an envelope's `code` is only the status). */
function messageOf(status: number, body: ErrorBody | string, code: string | undefined): string {
  const head = code === undefined ? `${status}` : `${status} ${code}`;
  if (typeof body === 'string') return `HTTP ${head}${body ? `: ${body.slice(0, 200)}` : ''}`;
  if ('error' in body) return `${head}: ${body.error.message}`;
  return `${head}: ${body.msg}`;
}

export class BadRequestError extends MediagateError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends MediagateError {
  override name = 'AuthenticationError';
}
export class InsufficientCreditsError extends MediagateError {
  override name = 'InsufficientCreditsError';
}
export class PermissionDeniedError extends MediagateError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends MediagateError {
  override name = 'NotFoundError';
}
export class ConflictError extends MediagateError {
  override name = 'ConflictError';
}
export class PayloadTooLargeError extends MediagateError {
  override name = 'PayloadTooLargeError';
}
export class RateLimitError extends MediagateError {
  override name = 'RateLimitError';
}
/** 5xx: a fault of the gateway or of an upstream, never of the request. */
export class ServerError extends MediagateError {
  override name = 'ServerError';
}

/** 401 `key_expired`: the key is past its `expires_at`; the operator can set a later one or make a new key. */
export class KeyExpiredError extends AuthenticationError {
  override name = 'KeyExpiredError';
}
/** 403 `model_not_allowed`: the key's allow-list does not include the model (the message names it). */
export class ModelNotAllowedError extends PermissionDeniedError {
  override name = 'ModelNotAllowedError';
}
/** 403 `caller_only`: an admin key tried to create a task, chat or upload. */
export class CallerOnlyError extends PermissionDeniedError {
  override name = 'CallerOnlyError';
}
/** 403 `admin_only`: a caller key called the admin API. */
export class AdminOnlyError extends PermissionDeniedError {
  override name = 'AdminOnlyError';
}

const BY_STATUS: Record<number, typeof MediagateError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
};

/** Codes with a class of their own (each a subclass of its status's class). */
const BY_CODE: Record<string, typeof MediagateError> = {
  key_expired: KeyExpiredError,
  model_not_allowed: ModelNotAllowedError,
  caller_only: CallerOnlyError,
  admin_only: AdminOnlyError,
};

/** The error class for an answer: by its code where it has a class of its own, else by its HTTP status. */
export function errorFor(
  status: number,
  body: ErrorBody | string,
  requestId: string | null,
  retryAfterSeconds: number | null,
  headerCode: string | null = null,
): MediagateError {
  const code = typeof body === 'object' && 'error' in body ? body.error.code : headerCode;
  const Class = (code ? BY_CODE[code] : undefined) ?? BY_STATUS[status] ?? (status >= 500 ? ServerError : MediagateError);
  return new Class(status, body, requestId, retryAfterSeconds, headerCode);
}

/** The gateway could not be reached, or the connection broke before an answer. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A request took longer than `timeoutMs`, or `waitFor` passed its `timeoutMs`. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** `waitFor` saw the task end `failed`; `task` is its query body (`task.error` says why). */
export class TaskFailedError extends Error {
  override name = 'TaskFailedError';
  constructor(readonly task: AnyTask) {
    super(`task ${task.id} failed: ${task.error ?? 'no reason given'}`);
  }
}

/** `waitFor` saw the task end `cancelled` (motion). */
export class TaskCancelledError extends Error {
  override name = 'TaskCancelledError';
  constructor(readonly task: AnyTask) {
    super(`task ${task.id} was cancelled`);
  }
}
