import { Type, type Static } from '../typebox.js';
import type { FastifyInstance } from 'fastify';
import { toCredits } from '../credits/money.js';
import type { AccountView } from '../credits/account-view.js';
import { AccountReply } from '../contract/gateway-replies.js';
import { KEYED_ERRORS, responses } from '../contract/responses.js';

const DAY_MS = 86_400_000;

const AccountQuery = Type.Object(
  {
    // a string: querystring values are not coerced (G244)
    days: Type.Optional(
      Type.String({
        pattern: '^([1-9]|[1-9][0-9]|[12][0-9][0-9]|3[0-5][0-9]|36[0-6])$',
        description: 'The usage period: the last this many days (1 to 366; default 30).',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * `GET /v1/account` (G203): the calling key's account, its credits (`balance`: what can still be
 * spent, grants minus captures minus open holds; `held`; `spent`) and what it spent per model over
 * the last `days` days. Amounts in credits.
 */
export function registerAccountRoutes(app: FastifyInstance, accounts: AccountView): void {
  app.get<{ Querystring: Static<typeof AccountQuery> }>(
    '/v1/account',
    {
      schema: {
        tags: ['account'],
        summary: "The calling key's account: balance, held and spent credits, usage per model",
        querystring: AccountQuery,
        response: responses({ 200: AccountReply }, [400, ...KEYED_ERRORS]),
      },
    },
    async (request): Promise<AccountReply> => {
      const days = request.query.days === undefined ? 30 : Number(request.query.days);
      const since = Date.now() - days * DAY_MS;
      const { account, usage } = await accounts.statement(request.apiKey.id, request.apiKey.accountId, since);
      return {
        account: { id: account.id, name: account.name },
        balance: toCredits(account.availableMicro),
        held: toCredits(account.heldMicro),
        spent: toCredits(account.spentMicro),
        usage: usage.map((u) => ({ model: u.model, settled: Number(u.settled), spent: toCredits(Number(u.spentMicro)) })),
        period: { since: Math.floor(since / 1000), days },
      };
    },
  );
}
