/**
 * Accounts and credits of the admin API and of the `mediagate accounts|credits` commands (G309,
 * G310): create, read, list, grant (negative: take back, never what is held), the ledger. Each
 * change writes its audit entry in its own transaction (G302).
 */
import type {
  AccountCreateBody,
  AccountListQuerystring,
  AdminAccount,
  AdminAccountList,
  AdminGrant,
  AdminLedger,
  GrantBody,
  LedgerQuerystring,
} from '../contract/admin-accounts.js';
import { LEDGER_KINDS } from '../contract/admin-accounts.js';
import { parseCredits, toCredits } from '../credits/money.js';
import { AppError, invalidField } from '../errors.js';
import { newAccountId } from '../ids.js';
import { MAX_AVAILABLE_MICRO, type AccountBalance, type CreditStore, type LedgerKind } from '../store/types.js';
import { auditEntry, type Actor } from './actor.js';
import { checkName } from './key-input.js';
import { decodeCursor, filtersDigest, pageOf, parseLimit } from './paging.js';
import { accountReply, ledgerEntryReply } from './replies.js';

export interface AccountAdminDeps {
  credits: CreditStore;
  /** MEDIAGATE_STARTING_CREDITS: a new account starts with it. */
  startingMicro: number;
  now?: () => number;
}

const notFound = (id: string): AppError => new AppError('account_not_found', `No account with id ${id}`, { param: 'id' });

/** `kind=hold,capture`: the ledger kinds asked for, each once. */
function kindsOf(raw: string | undefined): LedgerKind[] | undefined {
  if (raw === undefined) return undefined;
  const words = raw.split(',');
  const bad = words.find((w) => !(LEDGER_KINDS as readonly string[]).includes(w));
  if (bad !== undefined) throw invalidField('kind', `kind must be a comma-separated list of: ${LEDGER_KINDS.join(', ')} (got "${bad.slice(0, 40)}")`);
  return [...new Set(words)].sort() as LedgerKind[];
}

export class AccountAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: AccountAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  async create(body: AccountCreateBody, actor: Actor): Promise<AdminAccount> {
    const now = this.now();
    const account = { id: newAccountId(), name: checkName('name', body.name), createdAt: now, startingMicro: this.deps.startingMicro };
    await this.deps.credits.createAccount(
      account,
      auditEntry(actor, 'account.create', account.id, { name: account.name, starting_credits: toCredits(account.startingMicro) }, now),
    );
    return accountReply({ ...account, availableMicro: account.startingMicro, heldMicro: 0, spentMicro: 0 });
  }

  async get(id: string): Promise<AdminAccount> {
    return accountReply(await this.account(id));
  }

  async list(query: AccountListQuerystring): Promise<AdminAccountList> {
    const limit = parseLimit(query.limit);
    const filters = query.q === undefined ? {} : { nameContains: query.q };
    const digest = filtersDigest(['accounts', filters]);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, ['n', 's']);
    const rows = await this.deps.credits.listAccountsPage({
      ...filters,
      ...(before && { before: { createdAt: before[0] as number, id: before[1] as string } }),
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (a) => [a.createdAt, a.id], digest);
    return { object: 'list', data: page.items.map(accountReply), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  /** A grant, or with a negative amount an adjustment taking back at most what is available (G310). */
  async grant(id: string, body: GrantBody, actor: Actor): Promise<AdminGrant> {
    const micro = parseCredits(String(body.amount));
    if (micro === undefined || micro === 0)
      throw invalidField('amount', `amount must be a non-zero number of credits with at most 6 decimals (got ${body.amount})`);
    const note = checkName('note', body.note);
    const now = this.now();
    const outcome = await this.deps.credits.grant(id, micro, note, now, auditEntry(actor, 'account.grant', id, { amount: toCredits(micro), note }, now));
    if (outcome.granted) return { object: 'grant', entry: ledgerEntryReply(outcome.entry), account: accountReply(outcome.account) };
    if (outcome.refused === 'no_account') throw notFound(id);
    const a = outcome.account;
    if (outcome.refused === 'above_maximum') {
      throw new AppError(
        'grant_exceeds_maximum',
        `amount ${toCredits(micro)} would take account ${id}'s available credit (${toCredits(a.availableMicro)}) over the most an account may have ` +
          `available (${toCredits(MAX_AVAILABLE_MICRO)} credits)`,
        { param: 'amount' },
      );
    }
    throw new AppError(
      'grant_exceeds_available',
      `amount ${toCredits(micro)} would take back more than account ${id} has available (${toCredits(a.availableMicro)} credits; ` +
        `${toCredits(a.heldMicro)} more are held by tasks and chat requests under way and cannot be taken back)`,
      { param: 'amount' },
    );
  }

  async ledger(id: string, query: LedgerQuerystring): Promise<AdminLedger> {
    const limit = parseLimit(query.limit);
    const kinds = kindsOf(query.kind);
    await this.account(id);
    const digest = filtersDigest(['ledger', id, kinds ?? null]);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, ['n']);
    const rows = await this.deps.credits.ledgerPage({
      accountId: id,
      ...(kinds && { kinds }),
      ...(before && { beforeId: before[0] as number }),
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (e) => [e.id], digest);
    return { object: 'list', data: page.items.map(ledgerEntryReply), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  private async account(id: string): Promise<AccountBalance> {
    const account = await this.deps.credits.getAccount(id);
    if (!account) throw notFound(id);
    return account;
  }
}
