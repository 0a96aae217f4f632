import { Type, type Static, type TSchema, type TUnsafe } from '../typebox.js';
import { Nullable } from './task-replies.js';

/**
 * Pieces every admin API schema shares (G303): the list envelope, the paging query parameters, an
 * id in the path. Query values are strings (they are never coerced, G244): the routes read them.
 */

export const closed = { additionalProperties: false } as const;

export const ADMIN_TAG = 'admin';
export const DEFAULT_ADMIN_LIMIT = 20;
export const MAX_ADMIN_LIMIT = 100;

/** `{object: "list", data, has_more, next_cursor}` of `item`s. */
export const AdminList = <T extends TSchema>(item: T, title: string, what: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item, { description: `The ${what}, newest first` }),
      has_more: Type.Boolean({ description: 'Whether another page follows' }),
      next_cursor: Nullable(Type.String({ description: 'Send as `cursor` (with the same filters) for the next page; null on the last page' })),
    },
    { ...closed, title, description: `A page of ${what}` },
  );

/** `limit` and `cursor`. */
export const PagingQuery = {
  limit: Type.Optional(Type.String({ maxLength: 8, description: `Items per page, 1 to ${MAX_ADMIN_LIMIT} (default ${DEFAULT_ADMIN_LIMIT})` })),
  cursor: Type.Optional(Type.String({ maxLength: 400, description: 'next_cursor of the previous page (with the same filters)' })),
};

export const IdParams = (what: string) => Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: `The ${what}'s id` }) }, closed);

/** Unix seconds, or an ISO-8601 date-time with a time zone (as `created_after` of the task list). */
export const TimeQuery = (description: string) =>
  Type.Optional(Type.String({ maxLength: 64, description: `${description}: Unix seconds, or an ISO-8601 date-time with a time zone` }));

export const Created = Type.Integer({ description: 'When it was created, Unix seconds' });

/**
 * `schema` or null as one JSON Schema type list (`{"type": ["integer", "null"], ...}`) rather than a
 * union: a bad value then gets the rule it broke in its message (`limits.submits must be >= 1`),
 * where a union could only say "has the wrong type or value".
 */
export const OrNull = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> => {
  const { type, ...rest } = JSON.parse(JSON.stringify(schema)) as { type: string } & Record<string, unknown>; // a plain copy: no TypeBox symbols
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
};
