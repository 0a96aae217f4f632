import { Type, type TSchema } from '../typebox.js';
import type { ErrorStyle } from '../errors.js';
import { errorBodySchema } from './error-bodies.js';

/**
 * Route response maps for the OpenAPI document (G240-G242): a route's `schema.response` is built
 * here from its reply schema(s) and the statuses it can answer with an error, each rendered in the
 * route's error body (`errorStyle`). They document only: the serializer compiler set in
 * http/openapi.ts writes every reply with JSON.stringify, as before, whatever the schema says.
 */

/** A response without a body (304, 412, 416, a redirect). */
export const NoBody = (description: string): TSchema => Type.Null({ description });

/** A 2xx reply: its schema, or a content map for replies of several media types. */
export type SuccessSchema = TSchema | { description: string; content: Record<string, { schema: TSchema }> };

/** What every route behind the bearer key can answer: no or unknown key, rate limit, an internal fault, shutting down or the store down. */
export const KEYED_ERRORS = [401, 429, 500, 503] as const;
/** Create routes: bad body, credits, the key may not create or not this model (G301, G304), Idempotency-Key conflicts, body size, tasks in flight. */
export const CREATE_ERRORS = [400, 401, 402, 403, 409, 413, 429, 500, 503] as const;
/** Query routes: a bad `wait`, no such task of this key, an id longer than any id. */
export const QUERY_ERRORS = [400, 401, 404, 414, 429, 500, 503] as const;
/** Actions on one task (cancel): as a query, plus the task's state forbids it and a body too large. */
export const ACTION_ERRORS = [400, 401, 404, 409, 413, 414, 429, 500, 503] as const;

const REQUEST_ID = {
  'x-request-id': Type.String({
    description:
      "The request's id: the caller's own `X-Request-Id` when it was 1-64 of `A-Za-z0-9._:-`, else one made by the gateway; it names the request in the access log",
  }),
};
const RETRY_AFTER = { 'retry-after': Type.String({ description: 'Seconds to wait before retrying, when the gateway knows' }) };
const ERROR_CODE = {
  'x-error-code': Type.String({
    description: "The error's code in the catalog (docs/reference/errors.md), also where the body carries only the HTTP status (G312)",
  }),
};
const REPLAYED = {
  'idempotent-replayed': Type.Literal('true', {
    description: 'Sent when this is the stored reply (2xx or 402) of an earlier request with the same Idempotency-Key (G70)',
  }),
};

export interface ResponseOptions {
  /** Which error body the route answers with (D9). */
  style?: ErrorStyle;
  /** A create route: honours `Idempotency-Key` (documents `Idempotent-Replayed`). */
  idempotent?: boolean;
  /** Headers of the route's own that its 2xx replies carry (the console sign-in's `Set-Cookie`). */
  successHeaders?: Record<string, TSchema>;
}

/**
 * `schema.response` of a route: the 2xx replies by status, then the error body of each status in
 * `errors` (described by the catalog codes of that status), each with the headers it may carry.
 */
export function responses(success: Record<number, SuccessSchema>, errors: readonly number[], options: ResponseOptions = {}): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(success)) {
    const success = /^2/.test(status);
    out[Number(status)] = {
      ...schema,
      headers: { ...REQUEST_ID, ...(options.idempotent && success && REPLAYED), ...(success && options.successHeaders) },
    };
  }
  for (const status of errors) {
    const retry = status === 429 || status === 503 || status === 409;
    out[status] = {
      ...errorBodySchema(options.style ?? 'standard', status),
      headers: { ...REQUEST_ID, ...ERROR_CODE, ...(retry && RETRY_AFTER), ...(options.idempotent && status === 402 && REPLAYED) },
    };
  }
  return out;
}
