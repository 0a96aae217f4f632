import { AppError } from '../errors.js';

/** The parts of an Ajv error object (with `verbose: true`) that we read. */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: { description?: string; pattern?: string; enum?: unknown[] };
}

/** `/image_urls/2` -> `image_urls[2]`, `/messages/0/content` -> `messages[0].content`. */
export function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** `['messages', 0, 'content']` -> `messages[0].content`: numbers are array indexes, strings keys. */
export function joinFieldPath(parts: ReadonlyArray<string | number>): string {
  return parts.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

const PATTERN_WORDS: Array<[RegExp, string]> = [
  [/^\^\(\[hH\]/, 'an absolute http(s) URL or assetId://{id}'],
  [/^\^\[hH\]/, 'an absolute http(s) URL'],
  [/^\^-\?\[0-9\]/, 'a whole number (an integer or a string of digits)'],
  [/^\^\(\[0-9\]\|\[1-5\]/, 'a whole number of seconds from 0 to 60'],
  [/^\^\(\[1-9\]\|\[1-9\]\[0-9\]\|\[12\]/, 'a whole number of days from 1 to 366'],
];

/**
 * JSON.parse reads a number beyond the double range (`1e309`) as Infinity, which JSON.stringify
 * would write as `null`: name it for what it was.
 */
function nonFinite(n: number): string {
  return `${n > 0 ? '' : '-'}Infinity: a number beyond ±1.8e308, too large to represent`;
}

function describeValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : nonFinite(value);
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? (v > 0 ? 'Infinity' : '-Infinity') : v));
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** One Ajv error -> a sentence naming the field and the rule, in words a person can act on. */
export function describeSchemaError(err: SchemaError): { param: string | null; message: string; code: 'invalid_request' | 'unknown_model' | 'invalid_json' } {
  const field = fieldName(err.instancePath);
  const got = 'data' in err ? ` (got ${describeValue(err.data)})` : '';
  switch (err.keyword) {
    case 'required': {
      const missing = fieldName(err.instancePath, String(err.params.missingProperty));
      return { param: missing, message: `${missing} is required`, code: 'invalid_request' };
    }
    case 'type': {
      if (field === '') return { param: null, message: 'The request body must be a JSON object', code: 'invalid_json' };
      const want = String(err.params.type)
        .split(',')
        .map((t) => TYPE_WORDS[t] ?? t)
        .join(' or ');
      return { param: field, message: `${field} must be ${want}${got}`, code: 'invalid_request' };
    }
    case 'enum': {
      const allowed = (err.params.allowedValues as unknown[]).map(String).join(', ');
      const code = field === 'model' ? 'unknown_model' : 'invalid_request';
      return { param: field, message: `${field} must be one of: ${allowed}${got}`, code };
    }
    case 'const':
      return { param: field, message: `${field} must be ${describeValue(err.params.allowedValue)}${got}`, code: 'invalid_request' };
    case 'maxItems': {
      const n = Array.isArray(err.data) ? ` (got ${err.data.length})` : '';
      return { param: field, message: `${field} allows at most ${String(err.params.limit)} items${n}`, code: 'invalid_request' };
    }
    case 'minItems': {
      const n = Array.isArray(err.data) ? ` (got ${err.data.length})` : '';
      return { param: field, message: `${field} needs at least ${String(err.params.limit)} items${n}`, code: 'invalid_request' };
    }
    case 'minLength':
      return err.params.limit === 1
        ? { param: field, message: `${field} must not be empty`, code: 'invalid_request' }
        : { param: field, message: `${field} must be at least ${String(err.params.limit)} characters long`, code: 'invalid_request' };
    case 'maxLength': {
      const n = typeof err.data === 'string' ? ` (got ${err.data.length})` : '';
      return { param: field, message: `${field} must be at most ${String(err.params.limit)} characters long${n}`, code: 'invalid_request' };
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { param: field, message: `${field} must be ${String(err.params.comparison)} ${String(err.params.limit)}${got}`, code: 'invalid_request' };
    case 'pattern': {
      const pattern = String(err.params.pattern);
      const words = PATTERN_WORDS.find(([re]) => re.test(pattern))?.[1] ?? `text matching ${pattern}`;
      return { param: field, message: `${field} must be ${words}${got}`, code: 'invalid_request' };
    }
    case 'anyOf':
    case 'oneOf': {
      const desc = err.parentSchema?.description;
      return { param: field, message: `${field} has the wrong type or value${got}${desc ? `; expected ${desc}` : ''}`, code: 'invalid_request' };
    }
    case 'additionalProperties':
      return {
        param: fieldName(err.instancePath, String(err.params.additionalProperty)),
        message: `${fieldName(err.instancePath, String(err.params.additionalProperty))} is not a known field`,
        code: 'invalid_request',
      };
    default:
      return { param: field || null, message: `${field || 'body'} ${err.message ?? 'is invalid'}${got}`, code: 'invalid_request' };
  }
}

/**
 * Fastify `schemaErrorFormatter`: the first schema error becomes an AppError. Union members report
 * their own errors before the `anyOf` that sums them up; the summary is the one a caller can use.
 */
export function formatSchemaErrors(errors: readonly SchemaError[], dataVar: string): Error {
  const summary = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const chosen = summary && errors.every((e) => e.instancePath.startsWith(summary.instancePath)) ? summary : errors[0];
  if (!chosen) return new AppError('invalid_request', `Invalid ${dataVar}`);
  const { param, message, code } = describeSchemaError(chosen);
  const where = dataVar === 'body' ? '' : `${dataVar} `;
  return new AppError(code, `${where}${message}`, param === null ? {} : { param });
}
