import type { LightMyRequestResponse } from 'fastify';

/** The JSON body of an injected response, typed loosely for assertions. */
export function body(res: LightMyRequestResponse): Record<string, any> {
  return res.json() as Record<string, any>;
}
