/**
 * What `GET /v1/account` shows (G203), as a service (G392): the calling key's account with its
 * balances, and what it spent per model since a time. The route shapes the reply; it sees no store type.
 */
import { AppError } from '../errors.js';
import type { AccountBalance, CreditStore } from '../store/types.js';

export type { AccountBalance } from '../store/types.js';

export interface AccountStatement {
  account: AccountBalance;
  usage: Array<{ model: string; settled: number; spentMicro: number }>;
}

export class AccountView {
  constructor(private readonly credits: Pick<CreditStore, 'getAccount' | 'usage'>) {}

  /** The account a key belongs to and its usage since `since` (ms); a key naming no account is a 500. */
  async statement(keyId: string, accountId: string, since: number): Promise<AccountStatement> {
    const account = await this.credits.getAccount(accountId);
    if (!account) throw new AppError('internal_error', 'Internal server error', { cause: new Error(`key ${keyId} names no account ${accountId}`) });
    return { account, usage: await this.credits.usage(account.id, since) };
  }
}
