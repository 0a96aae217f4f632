/**
 * Request validators compiled on first use (G298). Fastify compiles the validator of every part of
 * every route (about 200 Ajv compilations) while it gets ready, a fifth of a start's CPU; here each
 * is compiled by the same compiler (`@fastify/ajv-compiler` with the app's Ajv options and shared
 * schemas, what Fastify uses by default) the first time a request needs it, so a start pays for
 * none (nor for loading Ajv) and a route for its own once.
 *
 * One compiler pool per process (G413): `@fastify/ajv-compiler` keeps one Ajv instance per set of
 * shared schemas and options, and Ajv keeps each schema object's validator, so a second app in the
 * same process (the tests start hundreds; a process running a gateway and its admin tools) reuses
 * the validators already compiled instead of compiling Ajv's meta-schema and every route again.
 */
import { createRequire } from 'node:module';
import type ajvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type BuildValidator = NonNullable<CompilersFactory['buildValidator']>;
type Validate = ReturnType<ReturnType<ReturnType<typeof ajvCompiler>>>;

type Pool = ReturnType<typeof ajvCompiler>;
let pool: Pool | undefined;

/** A `schemaController.compilersFactory.buildValidator` whose validators compile on their first call. */
export function lazyValidators(): BuildValidator {
  return (externalSchemas, ajvOptions) => {
    // Ajv itself (~90 modules) is required with the first validator compiled
    let compile: ReturnType<ReturnType<typeof ajvCompiler>> | undefined;
    return (route) => {
      let compiled: Validate | undefined;
      // Fastify reads a failed validation's errors from the function it called
      const validate = Object.assign(
        (data: unknown): unknown => {
          pool ??= (createRequire(import.meta.url)('@fastify/ajv-compiler') as typeof ajvCompiler)();
          compile ??= pool(externalSchemas, ajvOptions as Parameters<Pool>[1]);
          compiled ??= compile(route);
          const result = compiled(data);
          validate.errors = compiled.errors;
          return result;
        },
        { errors: null as Validate['errors'] },
      );
      return validate as unknown as Validate;
    };
  };
}
