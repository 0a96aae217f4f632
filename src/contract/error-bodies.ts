import { Type, type Static, type TSchema } from '../typebox.js';
import { type AppError, ERROR_CATALOG, type ErrorCode, type ErrorStyle } from '../errors.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable } from './task-replies.js';

/**
 * The three error bodies of D9 as TypeBox schemas (G241), for the OpenAPI document:
 * `renderErrorBody` (below) is typed with their `Static<>` types, and the schema of one
 * status lists exactly the catalog codes with that status (the standard body's `code` enum; the
 * `videos` and chat bodies carry the status itself as `code`).
 */

const closed = { additionalProperties: false } as const;
const ALL_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** The catalog codes answered with `status`. */
export function codesOfStatus(status: number): ErrorCode[] {
  return ALL_CODES.filter((code) => ERROR_CATALOG[code].status === status);
}

const standardBody = (codes: readonly ErrorCode[]) =>
  Type.Object(
    {
      error: Type.Object(
        {
          message: Type.String({ description: 'What went wrong, naming the field and the rule' }),
          type: StringEnum([...new Set(codes.map((c) => ERROR_CATALOG[c].type))]),
          param: Nullable(Type.String({ description: 'The request field the error is about (`image_urls[2]`)' })),
          code: StringEnum(codes, { description: 'The error code (docs/reference/errors.md)' }),
        },
        closed,
      ),
    },
    { ...closed, title: 'Error' },
  );

const statusCode = (statuses: readonly number[]) => StringEnum(statuses.map(String), { description: 'The HTTP status, as a string' });
const AnyStatus = Type.String({ pattern: '^[45][0-9][0-9]$', description: 'The HTTP status, as a string' });
const videosBody = <C extends TSchema>(code: C) => Type.Object({ code, msg: Type.String(), data: Type.Null() }, { ...closed, title: 'VideosError' });
const chatBody = <C extends TSchema>(code: C) =>
  Type.Object(
    {
      code,
      msg: Type.String(),
      data: Type.Null(),
      success: Type.Literal(false),
    },
    { ...closed, title: 'ChatError' },
  );

export const StandardErrorBody = standardBody(ALL_CODES);
export const VideosErrorBody = videosBody(AnyStatus);
export const ChatErrorBody = chatBody(AnyStatus);
export type StandardErrorBody = Static<typeof StandardErrorBody>;
export type VideosErrorBody = Static<typeof VideosErrorBody>;
export type ChatErrorBody = Static<typeof ChatErrorBody>;

/**
 * The error body a route of `style` answers with `status`; its description lists the catalog
 * codes of that status with what each means.
 */
export function errorBodySchema(style: ErrorStyle, status: number): TSchema {
  const key = `${style} ${status}`;
  let schema = errorBodies.get(key);
  if (!schema) {
    schema = buildErrorBodySchema(style, status);
    errorBodies.set(key, schema);
  }
  return schema;
}

/** Built once per style and status (G415): every route of an app asks for the same few, and every app of a process again. */
const errorBodies = new Map<string, TSchema>();

function buildErrorBodySchema(style: ErrorStyle, status: number): TSchema {
  const codes = codesOfStatus(status);
  if (codes.length === 0) throw new Error(`no error code of the catalog has status ${status}`);
  const description = codes.map((c) => `\`${c}\`: ${ERROR_CATALOG[c].description}`).join(' ');
  switch (style) {
    case 'standard':
      return { ...standardBody(codes), description };
    case 'videos-create':
      return { ...videosBody(statusCode([status])), description };
    case 'chat':
      return { ...chatBody(statusCode([status])), description };
  }
}

/** The body of `err` in the error style of the route (D9). */
export function renderErrorBody(style: ErrorStyle, err: AppError): StandardErrorBody | VideosErrorBody | ChatErrorBody {
  switch (style) {
    case 'videos-create':
      return { code: String(err.status), msg: err.message, data: null } satisfies VideosErrorBody;
    case 'chat':
      return { code: String(err.status), msg: err.message, data: null, success: false } satisfies ChatErrorBody;
    case 'standard':
      return { error: { message: err.message, type: err.type, param: err.param ?? null, code: err.code } } satisfies StandardErrorBody;
  }
}
