import { Type, type Static } from '../typebox.js';
import { AdminList, closed, Created, PagingQuery } from './admin-common.js';
import { MAX_CREDITS } from './admin-keys.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable } from './task-replies.js';

/**
 * Accounts, grants and the ledger of the admin API (G309, G310).
 * Amounts are credits (numbers with at most 6 decimals), as in `GET /v1/account`.
 */

const Credits = (description: string) => Type.Number({ description: `${description}, credits` });

export const AdminAccount = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('account'),
    name: Type.String(),
    created: Created,
    balance: Credits('What can still be spent: grants minus captures minus open holds'),
    held: Credits('Held by tasks and chat requests not settled yet'),
    spent: Credits('Captured so far'),
  },
  { ...closed, title: 'AdminAccount', description: 'An account: it owns keys and the credits they spend' },
);
export const AdminAccountList = AdminList(AdminAccount, 'AdminAccountList', 'accounts');

export const LEDGER_KINDS = ['grant', 'hold', 'capture', 'release', 'adjust'] as const;

export const AdminLedgerEntry = Type.Object(
  {
    id: Type.Integer(),
    object: Type.Literal('ledger_entry'),
    kind: StringEnum(LEDGER_KINDS, { description: 'grant, adjust (a negative grant), hold, and its settlement: capture or release' }),
    amount: Credits('Granted (adjust: signed), held, captured or released'),
    settled: Nullable(Credits('For a capture or release: the amount of the hold it settles')),
    key_id: Nullable(Type.String()),
    task_id: Nullable(Type.String()),
    request_id: Nullable(Type.String({ description: 'The chat request, for chat holds and their settlement' })),
    model: Nullable(Type.String()),
    note: Nullable(Type.String()),
    created: Created,
  },
  { ...closed, title: 'AdminLedgerEntry', description: "One entry of an account's append-only ledger" },
);
export const AdminLedger = AdminList(AdminLedgerEntry, 'AdminLedger', 'ledger entries');

export const AccountCreateBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A name for people (1-100 characters); the account starts with MEDIAGATE_STARTING_CREDITS',
    }),
  },
  { ...closed, title: 'AccountCreate' },
);

export const GrantBody = Type.Object(
  {
    amount: Type.Number({
      minimum: -MAX_CREDITS,
      maximum: MAX_CREDITS,
      description: 'Credits to add (at most 6 decimals, not 0); negative: taken back, at most what the account has available (G310)',
    }),
    note: Type.String({ minLength: 1, maxLength: 500, description: 'Why, for the ledger (1-500 characters)' }),
  },
  { ...closed, title: 'Grant' },
);

export const AdminGrant = Type.Object(
  {
    object: Type.Literal('grant'),
    entry: AdminLedgerEntry,
    account: AdminAccount,
  },
  { ...closed, title: 'AdminGrant', description: 'The ledger entry written, and the account after it' },
);

export const AccountListQuerystring = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only accounts whose name contains this text (any case)' })),
    ...PagingQuery,
  },
  closed,
);

export const LedgerQuerystring = Type.Object(
  {
    kind: Type.Optional(Type.String({ maxLength: 100, description: `Only entries of these kinds: a comma-separated list of ${LEDGER_KINDS.join(', ')}` })),
    ...PagingQuery,
  },
  closed,
);

export type AdminAccount = Static<typeof AdminAccount>;
export type AdminAccountList = Static<typeof AdminAccountList>;
export type AdminLedgerEntry = Static<typeof AdminLedgerEntry>;
export type AdminLedger = Static<typeof AdminLedger>;
export type AccountCreateBody = Static<typeof AccountCreateBody>;
export type GrantBody = Static<typeof GrantBody>;
export type AdminGrant = Static<typeof AdminGrant>;
export type AccountListQuerystring = Static<typeof AccountListQuerystring>;
export type LedgerQuerystring = Static<typeof LedgerQuerystring>;
