/**
 * The JSON body parser (replacing Fastify's, G116). Like Fastify's it refuses prototype
 * poisoning (a `__proto__` key, or a `constructor` key holding an object with a `prototype` key,
 * at any depth: objects built from such a body by a merge would change their prototype), but its
 * errors say what is wrong instead of "not valid JSON": the key and where it is, or the JSON
 * syntax error with its position.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { MAX_JSON_DEPTH } from './body-bounds.js';
import { joinFieldPath } from './validation-errors.js';

/** Where a forbidden key is: the path of the object holding it, and the key. */
interface Poison {
  path: Array<string | number>;
  key: '__proto__' | 'constructor';
}

/** The first forbidden key in document order; deeper than the depth bound is left to it (G78). */
export function findPoisonedKey(value: unknown, depth = 1): Poison | undefined {
  if (value === null || typeof value !== 'object' || depth > MAX_JSON_DEPTH + 1) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findPoisonedKey(value[i], depth + 1);
      if (found) {
        found.path.unshift(i);
        return found;
      }
    }
    return undefined;
  }
  const obj = value as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (k === '__proto__') return { path: [], key: '__proto__' };
    const child = obj[k];
    if (k === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return { path: [], key: 'constructor' };
    const found = findPoisonedKey(child, depth + 1);
    if (found) {
      found.path.unshift(k);
      return found;
    }
  }
  return undefined;
}

/** Only text holding `proto` (of `__proto__` or `prototype`) or a `\u` escape (which may spell them) can hold a forbidden key. */
const MAY_BE_POISONED = /proto|\\u/;

/** Parses a JSON body: the value, or the 400 `invalid_json` saying why not. */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new AppError('invalid_json', 'The body is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  const poison = MAY_BE_POISONED.test(text) ? findPoisonedKey(value) : undefined;
  if (poison) {
    const where = poison.path.length > 0 ? `in ${joinFieldPath(poison.path)}` : 'at the top level';
    const what = poison.key === '__proto__' ? 'a "__proto__" key' : 'a "constructor" key holding an object with a "prototype" key';
    throw new AppError(
      'invalid_json',
      `The body contains ${what} (${where}), which is not accepted: such keys can change the prototype of objects built from the body`,
    );
  }
  return value;
}

/**
 * The body's bytes as text: well-formed UTF-8 only. Decoding replaces a bad sequence with U+FFFD,
 * which would reach the task (and an upstream) as a different prompt than the one sent.
 */
export function jsonText(body: Buffer): string {
  if (!isUtf8(body)) throw new AppError('invalid_json', 'The body is not well-formed UTF-8 text; send JSON encoded as UTF-8');
  return body.toString('utf8');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's body schema is optional: an empty JSON body is no body (as a route without a body schema takes it). */
    optionalBody?: boolean;
  }
}

/**
 * Replaces Fastify's `application/json` parser for every route of `app` (body limit as
 * configured). A route that declares no body (or an optional one) takes an empty body sent as
 * JSON as no body: clients that always send the header get the same answer as those that do not.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const buffer = body as Buffer;
      const route = request.routeOptions;
      if (buffer.length === 0 && (route.schema?.body === undefined || route.config?.optionalBody === true)) done(null, undefined);
      else done(null, parseJsonBody(jsonText(buffer)));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/**
 * The parser for a route that needs no body (the motion cancel call, D23): an empty body is no
 * body; a body that is sent is parsed as above and must be a JSON object (its fields are ignored,
 * G30). `hint` ends the error messages ("the cancel call needs no body").
 */
export function registerOptionalJsonObjectParser(scope: FastifyInstance, hint: string): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    let text: string;
    try {
      text = jsonText(body as Buffer);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = parseJsonBody(text);
    } catch (err) {
      done(err instanceof AppError ? new AppError('invalid_json', `${err.message} (${hint})`) : (err as Error), undefined);
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
      done(new AppError('invalid_json', `The request body must be a JSON object (got ${got}); ${hint}, or {}`), undefined);
      return;
    }
    done(null, parsed);
  });
}
