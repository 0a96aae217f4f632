import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../admin/actor.js';
import type { KeyAdmin } from '../../admin/key-admin.js';
import { ADMIN_TAG, IdParams } from '../../contract/admin-common.js';
import {
  AdminKey,
  AdminKeyCreated,
  AdminKeyList,
  AdminKeyRotated,
  KeyCreateBody,
  KeyListQuerystring,
  KeyPatchBody,
  KeyRotateBody,
} from '../../contract/admin-keys.js';
import { responses } from '../../contract/responses.js';
import { invalidField } from '../../errors.js';
import { ADMIN_ERRORS } from './errors.js';

type IdRequest = { Params: { id: string } };

/** Who asks: the admin key of the request, and the request's id (G302). */
export const actorOf = (request: FastifyRequest): Actor => ({ id: request.apiKey.id, requestId: request.id });

/** `/admin/v1/keys` (G300-G308): list, create, read, change, revoke, rotate. */
export function registerAdminKeyRoutes(app: FastifyInstance, keys: KeyAdmin): void {
  const params = IdParams('key');
  app.get<{ Querystring: KeyListQuerystring }>(
    '/admin/v1/keys',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'API keys, newest first (filters: account_id, role, revoked, q)',
        querystring: KeyListQuerystring,
        response: responses({ 200: AdminKeyList }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => keys.list(request.query),
  );

  app.post<{ Body: KeyCreateBody }>(
    '/admin/v1/keys',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Create an API key; its secret is in this answer only',
        body: KeyCreateBody,
        response: responses({ 200: AdminKeyCreated }, [400, 413, ...ADMIN_ERRORS]),
      },
    },
    async (request) => keys.create(request.body, actorOf(request)),
  );

  app.get<IdRequest>(
    '/admin/v1/keys/:id',
    {
      schema: { tags: [ADMIN_TAG], summary: 'An API key', params, response: responses({ 200: AdminKey }, [404, 414, ...ADMIN_ERRORS]) },
    },
    async (request) => keys.get(request.params.id),
  );

  app.patch<IdRequest & { Body: KeyPatchBody }>(
    '/admin/v1/keys/:id',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: "Change an API key's name, models, expiry, limits or webhook URL",
        params,
        body: KeyPatchBody,
        response: responses({ 200: AdminKey }, [400, 404, 413, 414, ...ADMIN_ERRORS]),
      },
      preValidation: async (request) => {
        const body = request.body as Record<string, unknown> | null;
        for (const field of ['role', 'account_id']) {
          if (body !== null && typeof body === 'object' && Object.hasOwn(body, field)) {
            throw invalidField(
              field,
              `${field} cannot be changed (G300): make a new key with the ${field === 'role' ? 'role' : 'account'} it should have, then revoke this one`,
            );
          }
        }
      },
    },
    async (request) => keys.update(request.params.id, request.body, actorOf(request)),
  );

  app.post<IdRequest>(
    '/admin/v1/keys/:id/revoke',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Revoke an API key at once (every process refuses it from its next request on)',
        params,
        response: responses({ 200: AdminKey }, [404, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => keys.revoke(request.params.id, actorOf(request)),
  );

  app.post<IdRequest & { Body: KeyRotateBody }>(
    '/admin/v1/keys/:id/rotate',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'A new secret for an API key; the old one stays valid for grace_seconds (default 0)',
        params,
        body: KeyRotateBody,
        response: responses({ 200: AdminKeyRotated }, [400, 404, 409, 413, 414, ...ADMIN_ERRORS]),
      },
      // the body is optional: no body is `{}`
      config: { optionalBody: true },
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) => keys.rotate(request.params.id, request.body, actorOf(request)),
  );
}
