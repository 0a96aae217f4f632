/** `mediagate accounts ...` and `mediagate credits ...` (G205): accounts, grants, the ledger and reconcile. */
import { loadConfig } from '../config.js';
import { parseCredits, toCredits } from '../credits/money.js';
import { reconciled } from '../store/ledger-rows.js';
import { newAccountId } from '../ids.js';
import type { LedgerEntry, Store } from '../store/types.js';
import { parse, UsageError } from './cli-args.js';

export const ACCOUNTS_USAGE = `  accounts create --name NAME   create an account (with MEDIAGATE_STARTING_CREDITS); its id alone on the last line
  accounts list                 list accounts: id, name, balance, held, spent (credits)`;

export const CREDITS_USAGE = `  credits grant ACCOUNT_ID AMOUNT --note TEXT
                                add AMOUNT credits (up to 6 decimals; negative: an adjustment) to an account
  credits ledger ACCOUNT_ID     an account's ledger entries, oldest first
  credits reconcile             check every cached balance against the ledger and every hold settled at most
                                once; exits 1 on any mismatch`;

/** Marks a negative number among the arguments while they are parsed. */
const NEGATIVE = '\u0000';

const iso = (ms: number): string => new Date(ms).toISOString();

const NAME = /^.{1,100}$/;

export async function accountsCommand(store: Store, args: string[], usage: string): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { name: { type: 'string' } }, 0);
      if (!values.name || !NAME.test(values.name)) throw new UsageError('accounts create needs --name NAME (1-100 characters)');
      const id = newAccountId();
      const startingMicro = loadConfig().credits.startingMicro;
      await store.credits.createAccount({ id, name: values.name, createdAt: Date.now(), startingMicro });
      console.error(`Created account ${values.name} with ${toCredits(startingMicro)} credits.`);
      process.stdout.write(`${id}\n`);
      return 0;
    }
    case 'list': {
      parse(rest, {}, 0);
      for (const a of await store.credits.listAccounts()) {
        console.log(`${a.id}\t${a.name}\tbalance ${toCredits(a.availableMicro)}\theld ${toCredits(a.heldMicro)}\tspent ${toCredits(a.spentMicro)}\t${iso(a.createdAt)}`);
      }
      return 0;
    }
    default:
      throw new UsageError(usage);
  }
}

function entryLine(e: LedgerEntry): string {
  const ref = e.taskId ?? e.requestId ?? '-';
  const settled = e.settledMicro === null ? '' : ` (of a hold of ${toCredits(e.settledMicro)})`;
  return `${e.id}\t${iso(e.createdAt)}\t${e.kind}\t${toCredits(e.amountMicro)}${settled}\t${ref}\t${e.model ?? '-'}\t${e.note ?? ''}`;
}

export async function creditsCommand(store: Store, args: string[], usage: string): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'grant': {
      // a negative amount (`-3`) is an argument, not an option: kept in its place as a positional
      const escaped = rest.map((arg, i) => (/^-[0-9.]/.test(arg) && rest[i - 1] !== '--note' ? `${NEGATIVE}${arg}` : arg));
      const { values, positionals } = parse(escaped, { note: { type: 'string' } }, 2);
      const [accountId, amount] = positionals.map((arg) => (arg.startsWith(NEGATIVE) ? arg.slice(NEGATIVE.length) : arg));
      if (!accountId || amount === undefined) throw new UsageError('credits grant needs ACCOUNT_ID AMOUNT --note TEXT');
      const micro = parseCredits(amount);
      if (micro === undefined || micro === 0) throw new UsageError(`AMOUNT must be a non-zero number of credits, at most 999999999.999999 either way (6 decimals), got "${amount}"`);
      if (!values.note || !/^.{1,500}$/.test(values.note)) throw new UsageError('credits grant needs --note TEXT (1-500 characters): why, for the ledger');
      if (!(await store.credits.grant(accountId, micro, values.note, Date.now()))) { console.error(`no account with id ${accountId} (see accounts list)`); return 1; }
      const account = await store.credits.getAccount(accountId);
      console.log(`${micro < 0 ? 'adjusted' : 'granted'} ${toCredits(micro)} credits: ${accountId} now has ${toCredits(account?.availableMicro ?? 0)} available`);
      return 0;
    }
    case 'ledger': {
      const { positionals: [accountId] } = parse(rest, {}, 1);
      if (!accountId) throw new UsageError('credits ledger needs an ACCOUNT_ID (see accounts list)');
      if (!(await store.credits.getAccount(accountId))) { console.error(`no account with id ${accountId} (see accounts list)`); return 1; }
      for (const e of await store.credits.ledger(accountId)) console.log(entryLine(e));
      return 0;
    }
    case 'reconcile': {
      parse(rest, {}, 0);
      const report = await store.credits.reconcile();
      for (const m of report.mismatched) {
        const show = (t: typeof m.cached) => `balance ${toCredits(t.availableMicro)}, held ${toCredits(t.heldMicro)}, spent ${toCredits(t.spentMicro)}`;
        console.error(`MISMATCH account ${m.accountId}: cached ${show(m.cached)}; ledger ${show(m.ledger)}`);
      }
      for (const m of report.keysMismatched) {
        const show = (t: typeof m.cached) => `held ${toCredits(t.heldMicro)}, spent ${toCredits(t.spentMicro)}`;
        console.error(`MISMATCH key ${m.keyId}: cached ${show(m.cached)}; ledger ${show(m.ledger)}`);
      }
      for (const id of report.unsettled) console.error(`UNSETTLED task ${id} finished but its hold was never captured or released`);
      for (const ref of report.doubled) console.error(`DOUBLED ${ref}: settled twice, or settled without a matching hold`);
      const ok = reconciled(report);
      console.log(`${ok ? 'reconciled' : 'NOT reconciled'}: ${report.accounts} accounts, ${report.entries} ledger entries, ${report.open} holds open, `
        + `${report.mismatched.length + report.keysMismatched.length} balance mismatches, ${report.unsettled.length} unsettled, ${report.doubled.length} doubled`);
      return ok ? 0 : 1;
    }
    default:
      throw new UsageError(usage);
  }
}
