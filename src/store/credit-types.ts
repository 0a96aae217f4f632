/** Accounts, the credit ledger and the credit store (G200-G205). Part of the store contract (types.ts). */
import type { NewAuditEntry } from './audit-types.js';
import type { HoldRefusal } from './task-types.js';

/** An account: it owns keys, and the credits its keys spend (G200). */
export interface AccountRecord {
  id: string;
  name: string;
  createdAt: number;
}

export interface NewAccount extends AccountRecord {
  /** Credited by a `grant` ledger entry when it is created (micro-credits; 0: none). */
  startingMicro: number;
}

/** An account's cached totals (micro-credits): `available` = grants + adjustments - captures - open holds. */
export interface AccountBalance extends AccountRecord {
  availableMicro: number;
  heldMicro: number;
  spentMicro: number;
}

export type LedgerKind = 'grant' | 'hold' | 'capture' | 'release' | 'adjust';

/**
 * One append-only ledger entry (micro-credits). `amountMicro`: granted (adjust: signed), held,
 * captured (charged) or released. A capture or release settles one hold: `settledMicro` is that
 * hold's amount (a capture below it gives the rest back).
 */
export interface LedgerEntry {
  id: number;
  accountId: string;
  /** The key whose task or chat request it concerns (holds and settlements). */
  keyId: string | null;
  kind: LedgerKind;
  amountMicro: number;
  settledMicro: number | null;
  taskId: string | null;
  /** The chat request, for chat holds and their settlement. */
  requestId: string | null;
  model: string | null;
  note: string | null;
  createdAt: number;
}

/** What `credits reconcile` finds wrong; all empty when the books are right. */
export interface ReconcileReport {
  accounts: number;
  entries: number;
  /** Keys whose cached held and spent totals (G207) differ from the ledger's. */
  keysMismatched: Array<{ keyId: string; cached: { heldMicro: number; spentMicro: number }; ledger: { heldMicro: number; spentMicro: number } }>;
  /** Accounts whose cached totals differ from the ledger's. */
  mismatched: Array<{ accountId: string; cached: Omit<AccountBalance, keyof AccountRecord>; ledger: Omit<AccountBalance, keyof AccountRecord> }>;
  /** Holds of finished tasks that were never settled. */
  unsettled: string[];
  /** Holds settled more than once, and settlements without a hold (task or request ids). */
  doubled: string[];
  /** Holds still open (tasks queued or processing, chat requests under way): not a mismatch. */
  open: number;
}

/** What `CreditStore.grant` did (G310). */
export type GrantOutcome =
  | { granted: true; entry: LedgerEntry; account: AccountBalance }
  | { granted: false; refused: 'no_account' }
  /** A negative amount larger than what the account has available: nothing held may be taken back. */
  | { granted: false; refused: 'below_held'; account: AccountBalance }
  /** An amount that would take the account's available credit over {@link MAX_AVAILABLE_MICRO}. */
  | { granted: false; refused: 'above_maximum'; account: AccountBalance };

/**
 * The most credit an account may have available, in micro-credits (999,999,999.999999 credits,
 * the largest single grant): balances stay whole numbers a JavaScript number holds exactly (below
 * 2^53), so no sum of grants and holds is ever rounded (G442).
 */
export const MAX_AVAILABLE_MICRO = 999_999_999_999_999;

/** What `CreditStore.listAccountsPage` reads: accounts newest first (keyset pagination on (createdAt, id)). */
export interface AccountListQuery {
  /** Only accounts whose name contains this text (any case). */
  nameContains?: string;
  before?: { createdAt: number; id: string };
  limit: number;
}

/** What `CreditStore.ledgerPage` reads: one account's entries, newest first (keyset pagination on id). */
export interface LedgerQuery {
  accountId: string;
  kinds?: readonly LedgerKind[];
  /** Only entries with a smaller id: the last of the previous page. */
  beforeId?: number;
  limit: number;
}

/** Accounts and the ledger (G200-G205). */
export interface CreditStore {
  /** Creates an account (and its starting grant), and writes `audit` in the same transaction. */
  createAccount(account: NewAccount, audit?: NewAuditEntry): Promise<void>;
  getAccount(id: string): Promise<AccountBalance | undefined>;
  listAccounts(): Promise<AccountBalance[]>;
  /** One page of accounts, newest first (G309). */
  listAccountsPage(query: AccountListQuery): Promise<AccountBalance[]>;
  /**
   * A `grant` (or, for a negative amount, `adjust`) entry, with `audit` in the same transaction. A
   * negative amount may take back at most what the account has available (G310): checked and
   * written in one transaction, serialised with the account's holds.
   */
  grant(accountId: string, amountMicro: number, note: string, now: number, audit?: NewAuditEntry): Promise<GrantOutcome>;
  /** The account's entries, oldest first. */
  ledger(accountId: string): Promise<LedgerEntry[]>;
  /** One page of an account's entries, newest first (G309). */
  ledgerPage(query: LedgerQuery): Promise<LedgerEntry[]>;
  /**
   * Holds `amountMicro` for a chat request; with `enforce`, only if the account has that much
   * available and the key's spending cap allows it (checked and held in one transaction).
   */
  holdRequest(
    hold: { accountId: string; keyId: string; requestId: string; model: string; amountMicro: number; createdAt: number },
    enforce: boolean,
  ): Promise<{ held: true } | HoldRefusal>;
  /** Settles a chat request's hold: captures `amountMicro` (at most the hold) and releases the rest; false when it was settled already. */
  settleRequest(requestId: string, amountMicro: number, now: number): Promise<boolean>;
  /**
   * Releases the holds of chat requests made before `before` that were never settled (their
   * process died mid-request); returns how many. A settlement racing it loses or wins as a whole.
   */
  releaseStaleRequests(before: number, now: number): Promise<number>;
  /** Captured credits per model since `since` (Unix ms). */
  usage(accountId: string, since: number): Promise<Array<{ model: string; settled: number; spentMicro: number }>>;
  /** Compares every account's cached totals with its ledger and checks each hold was settled at most once. */
  reconcile(): Promise<ReconcileReport>;
}
