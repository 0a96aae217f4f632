/**
 * The OpenAPI document (`/openapi.json`, shown at `/docs`) and the rules that keep it whole
 * (G240-G244): every route's replies are TypeBox schemas from src/contract (the same
 * types the reply builders return), and a route that declares none is refused at start.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyServerOptions, RouteOptions } from 'fastify';
import { CONSOLE_SECURITY_SCHEMES } from '../contract/console.js';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * Response schemas document; they never shape a reply (G242). Fastify would otherwise write a reply
 * through fast-json-stringify compiled from its schema, which drops fields the schema lacks and
 * coerces types; every reply is JSON.stringify'd as it was before the schemas existed. Given to
 * Fastify as its serializer factory (`schemaController.compilersFactory.buildSerializer`), so it
 * never loads fast-json-stringify (nor the Ajv that loads; G298).
 */
export function documentOnlySerializers(): NonNullable<CompilersFactory['buildSerializer']> {
  return () => () => (data: unknown) => JSON.stringify(data);
}

/** Why a route has no place in the document, or undefined when it has one (and so needs response schemas). */
function undocumentedBecause(route: RouteOptions): string | undefined {
  const schema = route.schema as { hide?: boolean } | undefined;
  return schema?.hide === true ? 'hidden' : undefined;
}

/**
 * Refuses, at start, a documented route without a 2xx and an error response schema (G243). The
 * only way out is `schema: { hide: true }`: not part of the public API (the docs pages themselves).
 */
export function requireResponseSchemas(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (undocumentedBecause(route) !== undefined) return;
    const statuses = Object.keys((route.schema?.response ?? {}) as Record<string, unknown>);
    const methods = Array.isArray(route.method) ? route.method.join('|') : route.method;
    if (!statuses.some((s) => /^2/.test(s))) throw new Error(`${methods} ${route.url} declares no 2xx response schema (src/contract/responses.ts; G243)`);
    if (!statuses.some((s) => /^[45]/.test(s))) throw new Error(`${methods} ${route.url} declares no error response schema (src/contract/responses.ts; G243)`);
  });
}

/** `/openapi.json` (OpenAPI 3.1, G244) and the Swagger UI at `/docs`. Register before the routes. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'mediagate', version, description: 'Asynchronous image/video generation and chat. See docs/reference/api/README.md.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, ...CONSOLE_SECURITY_SCHEMES } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  requireResponseSchemas(app);
}
