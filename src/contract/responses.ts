import { Type, type TSchema } from '@sinclair/typebox';
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
/** Create routes: bad body, credits, Idempotency-Key conflicts, body size, tasks in flight. */
export const CREATE_ERRORS = [400, 401, 402, 409, 413, 429, 500, 503] as const;
/** Query routes: a bad `wait`, no such task of this key, an id longer than any id. */
export const QUERY_ERRORS = [400, 401, 404, 414, 429, 500, 503] as const;
/** Actions on one task (cancel): as a query, plus the task's state forbids it and a body too large. */
export const ACTION_ERRORS = [400, 401, 404, 409, 413, 414, 429, 500, 503] as const;

/**
 * `schema.response` of a route: the 2xx replies by status, then the error body of each status in
 * `errors` (described by the catalog codes of that status).
 */
export function responses(success: Record<number, SuccessSchema>, errors: readonly number[], style: ErrorStyle = 'standard'): Record<number, unknown> {
  const out: Record<number, unknown> = { ...success };
  for (const status of errors) out[status] = errorBodySchema(style, status);
  return out;
}
