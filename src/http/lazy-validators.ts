/**
 * Request validators compiled on first use (G298). Fastify compiles the validator of every part of
 * every route (about 200 Ajv compilations) while it gets ready, a fifth of a start's CPU; here each
 * is compiled by the same compiler (`@fastify/ajv-compiler` with the app's Ajv options and shared
 * schemas, what Fastify uses by default) the first time a request needs it, so a start pays for
 * none and a route for its own once.
 */
import ajvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type BuildValidator = NonNullable<CompilersFactory['buildValidator']>;
type Validate = ReturnType<ReturnType<ReturnType<typeof ajvCompiler>>>;

/** A `schemaController.compilersFactory.buildValidator` whose validators compile on their first call. */
export function lazyValidators(): BuildValidator {
  const build = ajvCompiler();
  return (externalSchemas, ajvOptions) => {
    const compile = build(externalSchemas, ajvOptions as Parameters<typeof build>[1]);
    return (route) => {
      let compiled: Validate | undefined;
      // Fastify reads a failed validation's errors from the function it called
      const validate = Object.assign((data: unknown): unknown => {
        compiled ??= compile(route);
        const result = compiled(data);
        validate.errors = compiled.errors;
        return result;
      }, { errors: null as Validate['errors'] });
      return validate as unknown as Validate;
    };
  };
}
