/**
 * The one error catalog. Every code the gateway can answer with lives here, with its HTTP status,
 * its `type` label and a one-line description; docs/reference/errors.md is generated from it (a test checks it is current).
 * The per-family error body shapes (D9) are rendered by `renderErrorBody` (src/contract/error-bodies.ts).
 */
import { isStorageUnavailable, STORAGE_RETRY_AFTER_SECONDS } from './media/storage-faults.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from './store/faults.js';

export const ERROR_CATALOG = {
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A field is missing, has the wrong type or value, or breaks a rule of the contract; `param` names the field.',
  },
  invalid_json: { status: 400, type: 'invalid_request_error', description: 'The body is not valid JSON, or is JSON but not an object.' },
  unsupported_content_type: { status: 400, type: 'invalid_request_error', description: 'The body was not sent as `application/json`.' },
  invalid_url: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The request path is not a valid URL: a percent-escape in it (such as `%ff`) does not decode to UTF-8 text.',
  },
  malformed_http: {
    status: 400,
    type: 'invalid_request_error',
    description:
      'The request is not valid HTTP/1.1 (for example both `Content-Length` and `Transfer-Encoding`, a body longer than its `Content-Length`, or a control byte in a header); the connection is closed after this answer.',
  },
  unknown_model: { status: 400, type: 'invalid_request_error', description: '`model` is not one of the values this endpoint accepts.' },
  exclusive_fields: { status: 400, type: 'invalid_request_error', description: 'Both members of a mutually exclusive pair were sent; the message names both.' },
  url_not_allowed: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A media URL is not http(s), or points at a private, loopback or otherwise non-public address.',
  },
  context_length_exceeded: {
    status: 400,
    type: 'invalid_request_error',
    description:
      'The conversation (plus `max_completion_tokens`) is longer than the model behind this chat model accepts; shorten `messages` or lower `max_completion_tokens`.',
  },
  media_fetch_failed: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A media URL could not be fetched (unreachable, timed out, HTTP error, too large, or not the expected kind of file).',
  },
  invalid_media: {
    status: 400,
    type: 'invalid_request_error',
    description:
      'A caller medium (image, video or audio URL, or `assetId://`) breaks a rule of its family: format, byte size, pixel size, aspect ratio, duration, frame rate or a total; the message names the field with its index and the rule.',
  },
  asset_not_found: {
    status: 400,
    type: 'invalid_request_error',
    description: 'An `assetId://` media reference names no approved, unexpired asset of the calling key.',
  },
  insufficient_credits: {
    status: 402,
    type: 'billing_error',
    description:
      "The key's account has fewer credits available than the request's price (`MEDIAGATE_CREDITS=on`); the message names the price and the balance. Nothing was created.",
  },
  missing_api_key: { status: 401, type: 'authentication_error', description: 'No `Authorization: Bearer <key>` header was sent.' },
  invalid_api_key: { status: 401, type: 'authentication_error', description: 'The bearer key is unknown or has been revoked.' },
  invalid_metrics_token: {
    status: 401,
    type: 'authentication_error',
    description: '`/metrics` was asked without `Authorization: Bearer <MEDIAGATE_METRICS_TOKEN>`, or with another token.',
  },
  key_expired: {
    status: 401,
    type: 'authentication_error',
    description: 'The bearer key is past its `expires_at` (G305); the message says when it expired. The operator can set a later time or make a new key.',
  },
  session_expired: {
    status: 401,
    type: 'authentication_error',
    description:
      'A web console request carried a session cookie that is unknown, signed out or past its expiry (`MEDIAGATE_CONSOLE_SESSION_HOURS`, G361); sign in again.',
  },
  invalid_callback_signature: {
    status: 401,
    type: 'authentication_error',
    description:
      "A provider callback is not signed by that provider's upstream, or was signed more than 5 minutes away from the gateway's clock; nothing was changed.",
  },
  result_link_invalid: { status: 403, type: 'permission_error', description: 'A result download URL was altered or is not signed by this gateway.' },
  result_link_expired: { status: 403, type: 'permission_error', description: 'A result download URL is past its expiry (the family retention ended).' },
  asset_quota_exceeded: {
    status: 403,
    type: 'permission_error',
    description:
      'Storing this upload would take the key past its asset storage quota (`MEDIAGATE_ASSET_QUOTA_BYTES`); space comes back as assets expire (`MEDIAGATE_ASSET_TTL_HOURS`).',
  },
  admin_only: { status: 403, type: 'permission_error', description: 'An `/admin/v1/*` endpoint was called with a caller key; only admin keys may (G301).' },
  caller_only: {
    status: 403,
    type: 'permission_error',
    description: 'An admin key tried to create a task, chat or upload an asset: admin keys only read the public API (G301). Nothing was created.',
  },
  model_not_allowed: {
    status: 403,
    type: 'permission_error',
    description: "The key's `models` allow-list does not include the model asked for (G304); the message names the model. Nothing was created.",
  },
  csrf_token_invalid: {
    status: 403,
    type: 'permission_error',
    description:
      "A change (POST, PUT, PATCH, DELETE) authenticated by a web console session did not send that session's CSRF token in `x-csrf-token` (G362). Nothing was changed.",
  },
  task_not_found: {
    status: 404,
    type: 'not_found_error',
    description: "No task with this id belongs to the calling key (unknown ids and other keys' ids look the same).",
  },
  result_not_found: { status: 404, type: 'not_found_error', description: 'The result file behind a valid link no longer exists (deleted by retention).' },
  asset_id_not_found: { status: 404, type: 'not_found_error', description: 'No asset with this id belongs to the calling key.' },
  key_not_found: { status: 404, type: 'not_found_error', description: 'No API key has this id (admin API).' },
  account_not_found: { status: 404, type: 'not_found_error', description: 'No account has this id (admin API).' },
  channel_not_found: { status: 404, type: 'not_found_error', description: 'No provider (channel) has this id (admin API).' },
  route_not_found: { status: 404, type: 'not_found_error', description: 'No endpoint has this method and path.' },
  request_timeout: {
    status: 408,
    type: 'invalid_request_error',
    description:
      'The request did not arrive whole in time (headers within `MEDIAGATE_HEADERS_TIMEOUT_SECONDS`, 10 s by default; the whole request within 120 s); the connection is closed after this answer.',
  },
  invalid_task_state: {
    status: 409,
    type: 'conflict_error',
    description: "The action is not allowed in the task's current state (for example cancelling a finished task).",
  },
  idempotency_key_reused: {
    status: 409,
    type: 'conflict_error',
    description: 'The `Idempotency-Key` was used in the last 24 hours with another body or endpoint; use a new key for a new request.',
  },
  idempotency_in_progress: {
    status: 409,
    type: 'conflict_error',
    description: 'A request with the same `Idempotency-Key` is still being processed; retry after the seconds in `Retry-After`.',
  },
  key_revoked: { status: 409, type: 'conflict_error', description: 'The key is revoked: it cannot be given a new secret (admin API, G307).' },
  grant_exceeds_available: {
    status: 409,
    type: 'conflict_error',
    description:
      'A negative grant would take back more than the account has available: credits held by tasks and chat requests under way cannot be taken back (G310); the message names both amounts.',
  },
  grant_exceeds_maximum: {
    status: 409,
    type: 'conflict_error',
    description:
      'A grant would take the account over the most credit an account may have available (999999999.999999 credits, G442); the message names both amounts.',
  },
  body_too_large: { status: 413, type: 'invalid_request_error', description: 'The request body is larger than the configured limit.' },
  uri_too_long: { status: 414, type: 'invalid_request_error', description: 'A path segment (an id) is longer than 100 characters; no id is that long.' },
  too_many_tasks_in_flight: {
    status: 429,
    type: 'rate_limit_error',
    description: 'The key already has as many queued and processing tasks as allowed (`MEDIAGATE_MAX_TASKS_IN_FLIGHT`); wait for some to finish.',
  },
  rate_limited: { status: 429, type: 'rate_limit_error', description: 'Too many requests; retry after the number of seconds in `Retry-After`.' },
  headers_too_large: {
    status: 431,
    type: 'invalid_request_error',
    description: 'The request headers are larger than 16 KiB; the connection is closed after this answer.',
  },
  internal_error: { status: 500, type: 'server_error', description: 'An unexpected fault inside the gateway; nothing the caller sent caused it.' },
  upstream_error: { status: 502, type: 'upstream_error', description: 'The model provider answered with an error or something unreadable.' },
  service_unavailable: {
    status: 503,
    type: 'server_error',
    description: 'The gateway is shutting down, or its database or file storage cannot be reached now; retry after the seconds in `Retry-After`.',
  },
  upstream_unavailable: {
    status: 503,
    type: 'upstream_error',
    description:
      "No model provider behind this model takes requests now (each has failed repeatedly and is paused), or a provider callback cannot be checked because the upstream's signing keys cannot be fetched now; retry after the seconds in `Retry-After`.",
  },
  upstream_timeout: { status: 504, type: 'upstream_error', description: 'The model provider did not answer in time.' },
} as const satisfies Record<string, { status: number; type: string; description: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface AppErrorOptions {
  /** The request field the error is about (`image_urls[2]`), or undefined. */
  param?: string;
  cause?: unknown;
  /** Whether repeating the same call later may succeed (used by the task runner for retries). */
  retryable?: boolean;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: (typeof ERROR_CATALOG)[ErrorCode]['type'];
  readonly param: string | undefined;
  readonly retryable: boolean;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.type = ERROR_CATALOG[code].type;
    this.param = options.param;
    this.retryable = options.retryable ?? this.status >= 500;
    this.headers = options.headers;
  }
}

/**
 * Any thrown value as the AppError a caller may see: an AppError as it is; the database or the
 * storage unreachable a 503 with `Retry-After` (G256, G260: the server's fault, passing); anything
 * else a bare 500. The message never names a host, port, bucket or path: details go to the log only.
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isStoreUnavailable(err)) {
    return new AppError('service_unavailable', `The gateway's database is not reachable now; retry in ${STORE_RETRY_AFTER_SECONDS} s`, {
      cause: err,
      headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) },
    });
  }
  if (isStorageUnavailable(err)) {
    return new AppError('service_unavailable', `The gateway's file storage is not reachable now; retry in ${STORAGE_RETRY_AFTER_SECONDS} s`, {
      cause: err,
      headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
    });
  }
  return new AppError('internal_error', 'Internal server error', { cause: err });
}

/** Why a request's work stopped when its client closed the connection (not an error the client sees). */
export class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'AbortError';
  }
}

/** Shorthand for the most common error: a field breaks a rule. */
export function invalidField(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

/**
 * Which error body a route answers with (D9):
 * - `videos-create`: `{code, msg, data: null}`
 * - `chat`: `{code, msg, data: null, success: false}`
 * - `standard`: `{error: {message, type, param, code}}` (every other route, queries included)
 */
export type ErrorStyle = 'standard' | 'videos-create' | 'chat';
