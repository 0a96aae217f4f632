/**
 * JSON configuration files (`MEDIAGATE_CHAT_CONFIG`, ...) validated against a TypeBox schema: the
 * schema is the one description of the file's shape, its `description`s are the rules stated in
 * errors (`<path> must be <description>`). Fields marked `secret: true` never have their value
 * quoted. Every problem is a ConfigError naming the setting and the path in the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Value, ValueErrorType, type Static, type TSchema, type ValueError } from './typebox.js';
import { ConfigError } from './config-error.js';

/** `/upstreams/a/baseUrl` -> `upstreams.a.baseUrl`; the root is `the file`. */
export function configPath(pointer: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.length === 0 ? 'the file' : parts.join('.');
}

function quote(value: unknown, schema: { secret?: boolean }): string {
  if (schema.secret) return '';
  const text = JSON.stringify(value);
  if (text === undefined) return '';
  return `, got ${text.length > 80 ? `${text.slice(0, 77)}...` : text}`;
}

/** One schema error in words. */
function describe(err: ValueError): string {
  const where = configPath(err.path);
  const schema = err.schema as { description?: string; secret?: boolean; properties?: Record<string, unknown> };
  switch (err.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `${where} is required${schema.description ? `: ${schema.description}` : ''}`;
    case ValueErrorType.ObjectAdditionalProperties: {
      const parts = err.path.split('/');
      const field = parts.pop()!;
      const parent = configPath(parts.join('/'));
      const allowed = Object.keys(schema.properties ?? {});
      return `${parent} has an unknown field "${field}"${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`;
    }
    default:
      return `${where} must be ${schema.description ?? err.message.replace(/^Expected /, '')}${quote(err.value, schema)}`;
  }
}

/**
 * `value` checked against `schema`; throws a ConfigError for the first problem (an unknown field
 * before the required one it may be a typo of). `at`: where `value` is in the file, as a JSON
 * pointer (`/providers/a/models`), for a part whose shape depends on another field.
 */
export function checkConfigJson<S extends TSchema>(setting: string, schema: S, value: unknown, at = ''): Static<S> {
  if (Value.Check(schema, value)) return value as Static<S>;
  const errors = [...Value.Errors(schema, value)];
  const first = errors.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties) ?? errors[0]!;
  throw new ConfigError(setting, describe({ ...first, path: `${at}${first.path}` }));
}

/** Reads and parses a JSON file named by `setting`, then checks it against `schema`. */
export function readConfigJson<S extends TSchema>(setting: string, file: string, schema: S): Static<S> {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(file), 'utf8');
  } catch (err) {
    throw new ConfigError(setting, `cannot read "${file}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(setting, `"${file}" is not valid JSON: ${(err as Error).message}`);
  }
  return checkConfigJson(setting, schema, json);
}
