import type { FastifyInstance } from 'fastify';
import type { AccountAdmin } from '../../admin/account-admin.js';
import {
  AccountCreateBody,
  AccountListQuerystring,
  AdminAccount,
  AdminAccountList,
  AdminGrant,
  AdminLedger,
  GrantBody,
  LedgerQuerystring,
} from '../../contract/admin-accounts.js';
import { ADMIN_TAG, IdParams } from '../../contract/admin-common.js';
import { responses } from '../../contract/responses.js';
import { ADMIN_ERRORS } from './errors.js';
import { actorOf } from './keys.js';

type IdRequest = { Params: { id: string } };

/** `/admin/v1/accounts` (G309, G310): list, create, read, grants, the ledger. */
export function registerAdminAccountRoutes(app: FastifyInstance, accounts: AccountAdmin): void {
  const params = IdParams('account');
  app.get<{ Querystring: AccountListQuerystring }>(
    '/admin/v1/accounts',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Accounts, newest first, with their balance, held and spent credits',
        querystring: AccountListQuerystring,
        response: responses({ 200: AdminAccountList }, [400, ...ADMIN_ERRORS]),
      },
    },
    async (request) => accounts.list(request.query),
  );

  app.post<{ Body: AccountCreateBody }>(
    '/admin/v1/accounts',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Create an account (with MEDIAGATE_STARTING_CREDITS)',
        body: AccountCreateBody,
        response: responses({ 200: AdminAccount }, [400, 413, ...ADMIN_ERRORS]),
      },
    },
    async (request) => accounts.create(request.body, actorOf(request)),
  );

  app.get<IdRequest>(
    '/admin/v1/accounts/:id',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'An account: balance, held, spent',
        params,
        response: responses({ 200: AdminAccount }, [404, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => accounts.get(request.params.id),
  );

  app.post<IdRequest & { Body: GrantBody }>(
    '/admin/v1/accounts/:id/grants',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: 'Grant credits (negative: take back, never what is held)',
        params,
        body: GrantBody,
        response: responses({ 200: AdminGrant }, [400, 404, 409, 413, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => accounts.grant(request.params.id, request.body, actorOf(request)),
  );

  app.get<IdRequest & { Querystring: LedgerQuerystring }>(
    '/admin/v1/accounts/:id/ledger',
    {
      schema: {
        tags: [ADMIN_TAG],
        summary: "An account's ledger, newest first",
        params,
        querystring: LedgerQuerystring,
        response: responses({ 200: AdminLedger }, [400, 404, 414, ...ADMIN_ERRORS]),
      },
    },
    async (request) => accounts.ledger(request.params.id, request.query),
  );
}
