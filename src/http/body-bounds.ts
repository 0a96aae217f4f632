/**
 * Bounds on JSON bodies beyond their byte size (`MEDIAGATE_BODY_LIMIT`, 413): nesting depth. A
 * deeply nested body is cheap to send and costly to walk (validation, logging, pass-through to
 * Model Center providers), so more than {@link MAX_JSON_DEPTH} levels is a 400 before validation.
 */
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import { hookList, routeHasMethod } from './route-hooks.js';

export const MAX_JSON_DEPTH = 32;

/** Whether `value` nests objects/arrays deeper than `max` levels (recursion at most `max` + 1 deep). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  return value !== null && typeof value === 'object' && deeperThan(value, 1, max);
}

function deeperThan(v: object, depth: number, max: number): boolean {
  if (depth > max) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const child: unknown = v[i];
      if (child !== null && typeof child === 'object' && deeperThan(child, depth + 1, max)) return true;
    }
    return false;
  }
  for (const k of Object.keys(v)) { // own keys only, as JSON.parse makes them
    const child: unknown = (v as Record<string, unknown>)[k];
    if (child !== null && typeof child === 'object' && deeperThan(child, depth + 1, max)) return true;
  }
  return false;
}

const checkDepth: preValidationHookHandler = function checkDepth(request, _reply, done) {
  if (request.body !== null && typeof request.body === 'object' && nestsDeeperThan(request.body, MAX_JSON_DEPTH)) {
    done(new AppError('invalid_json', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels`));
    return;
  }
  done();
};

/** Adds the depth check to every route of `scope` that takes a body. */
export function registerBodyBounds(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    if (routeHasMethod(route, 'POST')) route.preValidation = [checkDepth, ...hookList(route.preValidation)];
  });
}
