/**
 * Checks on JSON bodies beyond their byte size (`MEDIAGATE_BODY_LIMIT`, 413), before validation,
 * for every POST (and the admin API's PATCH) route of the API (G78, G110):
 * - nesting depth: a deeply nested body is cheap to send and costly to walk (validation, logging,
 *   pass-through to Model Center providers), so more than {@link MAX_JSON_DEPTH} levels is a 400;
 * - well-formed text: JSON lets a string (or a key) hold a lone UTF-16 surrogate (`"\ud800"`), which
 *   no text can contain and which breaks UTF-8 encoders downstream (tokenizers, providers, files).
 *   Any string value or key holding one is a 400 naming it (`messages[0].content`).
 * One walk does both; the path of a bad string is built only once one is found.
 */
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import { hookList, routeHasMethod } from './route-hooks.js';
import { joinFieldPath } from './validation-errors.js';

export const MAX_JSON_DEPTH = 32;

/** `String.prototype.isWellFormed` (ES2024, in Node 20; this project compiles against the ES2023 lib). */
const isWellFormed = (String.prototype as unknown as { isWellFormed: (this: string) => boolean }).isWellFormed;

/** What is wrong with a parsed body: too deep, or a string value or key with a lone surrogate. */
export type BodyProblem = { kind: 'too-deep' } | { kind: 'lone-surrogate'; path: Array<string | number>; inKey: boolean; text: string };

const TOO_DEEP: BodyProblem = { kind: 'too-deep' };

/**
 * The first problem of `value` in document order, or undefined. Recursion is at most `max` + 1
 * deep. With `strings: false` only the depth is checked.
 */
export function findBodyProblem(value: unknown, max: number, strings = true): BodyProblem | undefined {
  if (typeof value === 'string') return strings && !isWellFormed.call(value) ? loneSurrogate(value, false) : undefined;
  return value !== null && typeof value === 'object' ? scan(value, 1, max, strings) : undefined;
}

/** Whether `value` nests objects/arrays deeper than `max` levels. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  return findBodyProblem(value, max, false) !== undefined;
}

function loneSurrogate(text: string, inKey: boolean): BodyProblem {
  return { kind: 'lone-surrogate', path: [], inKey, text };
}

/** Prefixes the path of a problem found below `step` (only on failure: the hot path builds no paths). */
function under(problem: BodyProblem, step: string | number): BodyProblem {
  if (problem.kind === 'lone-surrogate') problem.path.unshift(step);
  return problem;
}

function scan(v: object, depth: number, max: number, strings: boolean): BodyProblem | undefined {
  if (depth > max) return TOO_DEEP;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const child: unknown = v[i];
      if (typeof child === 'string') {
        if (strings && !isWellFormed.call(child)) return under(loneSurrogate(child, false), i);
      } else if (child !== null && typeof child === 'object') {
        const problem = scan(child, depth + 1, max, strings);
        if (problem) return under(problem, i);
      }
    }
    return undefined;
  }
  for (const k of Object.keys(v)) {
    // own keys only, as JSON.parse makes them
    if (strings && !isWellFormed.call(k)) return under(loneSurrogate(k, true), k);
    const child: unknown = (v as Record<string, unknown>)[k];
    if (typeof child === 'string') {
      if (strings && !isWellFormed.call(child)) return under(loneSurrogate(child, false), k);
    } else if (child !== null && typeof child === 'object') {
      const problem = scan(child, depth + 1, max, strings);
      if (problem) return under(problem, k);
    }
  }
  return undefined;
}

/** `a\ud800b` -> `a\ud800b` as ASCII-safe text: each lone surrogate written as its escape. */
function escapeLoneSurrogates(text: string): string {
  return text.replace(/\p{Cs}/gu, (s) => `\\u${s.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The 400 for a problem, naming the field and the rule. */
export function bodyProblemError(problem: BodyProblem): AppError {
  if (problem.kind === 'too-deep') return new AppError('invalid_json', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
  const field = joinFieldPath(problem.path.map((p) => (typeof p === 'string' ? escapeLoneSurrogates(p) : p)));
  const at = problem.text.search(/\p{Cs}/u);
  const unit = `\\u${problem.text.charCodeAt(at).toString(16).padStart(4, '0')}`;
  const rule = `contains a lone UTF-16 surrogate (${unit} at position ${at}); text must be well-formed Unicode: send the character itself or a complete surrogate pair`;
  if (!problem.inKey) return new AppError('invalid_request', `${field} ${rule}`, { param: field });
  const parent = joinFieldPath(problem.path.slice(0, -1).map((p) => (typeof p === 'string' ? escapeLoneSurrogates(p) : p)));
  return new AppError('invalid_request', `The key "${escapeLoneSurrogates(problem.text)}" ${parent ? `in ${parent}` : 'of the body'} ${rule}`, {
    param: field,
  });
}

const checkBody: preValidationHookHandler = function checkBody(request, _reply, done) {
  const body: unknown = request.body;
  if (body !== null && typeof body === 'object') {
    const problem = findBodyProblem(body, MAX_JSON_DEPTH);
    if (problem) {
      done(bodyProblemError(problem));
      return;
    }
  }
  done();
};

/** Adds the body checks to every route of `scope` that takes a body. */
export function registerBodyBounds(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    if (routeHasMethod(route, 'POST') || routeHasMethod(route, 'PATCH')) route.preValidation = [checkBody, ...hookList(route.preValidation)];
  });
}
