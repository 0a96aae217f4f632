/**
 * `mediagate accounts ...` and `mediagate credits ...` (G205, G309, G310, G314): accounts, grants and
 * the ledger on the database (audited as `cli`) or, with `--url URL`, through a gateway's admin API;
 * `credits reconcile` reads the database, so it runs on the server only.
 */
import type { AdminLedgerEntry } from '../../packages/client/dist/index.js';
import { loadSettingsConfig } from '../settings-config.js';
import { parseCredits, toCredits } from '../credits/money.js';
import { reconciled } from '../store/ledger-rows.js';
import { createStore } from '../store/create-store.js';
import { ADMIN_EXIT, allPages, openTarget, reportAdminError, urlFlagOf, type AdminTarget } from './admin-target.js';
import { parse, UsageError } from './cli-args.js';

export const ACCOUNTS_USAGE = `  accounts create --name NAME   create an account (with MEDIAGATE_STARTING_CREDITS); its id alone on the last line
  accounts list [--name TEXT]   list accounts: id, name, balance, held, spent (credits)
  accounts get ACCOUNT_ID       an account's record as JSON`;

export const CREDITS_USAGE = `  credits grant ACCOUNT_ID AMOUNT --note TEXT
                                add AMOUNT credits (up to 6 decimals; negative: take back, at most what is
                                available: held credits stay) to an account
  credits ledger ACCOUNT_ID     an account's ledger entries, oldest first
  credits reconcile             check every cached balance against the ledger and every hold settled at most
                                once; exits 1 on any mismatch (on the server only)`;

const FLAGS: Record<string, string> = { name: '--name', amount: 'AMOUNT', note: '--note' };
const URL_FLAG = { url: { type: 'string' } } as const;

/** Marks a negative number among the arguments while they are parsed. */
const NEGATIVE = '\u0000';

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function entryLine(e: AdminLedgerEntry): string {
  const ref = e.task_id ?? e.request_id ?? '-';
  const settled = e.settled === null ? '' : ` (of a hold of ${e.settled})`;
  return `${e.id}\t${iso(e.created)}\t${e.kind}\t${e.amount}${settled}\t${ref}\t${e.model ?? '-'}\t${e.note ?? ''}`;
}

/** Runs one command on its target (the database, or the gateway of `--url`), reporting refusals. */
async function onTarget(args: string[], fn: (target: AdminTarget) => Promise<number>): Promise<number> {
  const target = await openTarget(urlFlagOf(args));
  try {
    return await fn(target);
  } catch (err) {
    return reportAdminError(err, FLAGS);
  } finally {
    await target.close();
  }
}

export async function accountsCommand(args: string[], usage: () => Promise<string>): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...URL_FLAG, name: { type: 'string' } }, 0);
      if (!values.name || !/^.{1,100}$/u.test(values.name)) throw new UsageError('accounts create needs --name NAME (1-100 characters)');
      const name = values.name;
      return onTarget(rest, async (target) => {
        const account = await target.accounts.create({ name });
        console.error(`Created account ${account.name} with ${account.balance} credits.`);
        process.stdout.write(`${account.id}\n`);
        return ADMIN_EXIT.ok;
      });
    }
    case 'list': {
      const { values } = parse(rest, { ...URL_FLAG, name: { type: 'string' } }, 0);
      return onTarget(rest, async (target) => {
        const accounts = await allPages((cursor) =>
          target.accounts.list({ limit: 100, ...(values.name !== undefined && { q: values.name }), ...(cursor !== undefined && { cursor }) }),
        );
        for (const a of accounts.reverse()) console.log(`${a.id}\t${a.name}\tbalance ${a.balance}\theld ${a.held}\tspent ${a.spent}\t${iso(a.created)}`);
        return ADMIN_EXIT.ok;
      });
    }
    case 'get': {
      const {
        positionals: [id],
      } = parse(rest, URL_FLAG, 1);
      if (!id) throw new UsageError('accounts get needs an ACCOUNT_ID (see accounts list)');
      return onTarget(rest, async (target) => {
        console.log(JSON.stringify(await target.accounts.get(id)));
        return ADMIN_EXIT.ok;
      });
    }
    default:
      throw new UsageError(await usage());
  }
}

export async function creditsCommand(args: string[], usage: () => Promise<string>): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'grant': {
      // a negative amount (`-3`) is an argument, not an option: kept in its place as a positional
      const escaped = rest.map((arg, i) => (/^-[0-9.]/.test(arg) && rest[i - 1] !== '--note' ? `${NEGATIVE}${arg}` : arg));
      const { values, positionals } = parse(escaped, { ...URL_FLAG, note: { type: 'string' } }, 2);
      const [accountId, amount] = positionals.map((arg) => (arg.startsWith(NEGATIVE) ? arg.slice(NEGATIVE.length) : arg));
      if (!accountId || amount === undefined) throw new UsageError('credits grant needs ACCOUNT_ID AMOUNT --note TEXT');
      const micro = parseCredits(amount);
      if (micro === undefined || micro === 0)
        throw new UsageError(`AMOUNT must be a non-zero number of credits, at most 999999999.999999 either way (6 decimals), got "${amount}"`);
      if (!values.note || !/^.{1,500}$/u.test(values.note)) throw new UsageError('credits grant needs --note TEXT (1-500 characters): why, for the ledger');
      const note = values.note;
      return onTarget(rest, async (target) => {
        const { account } = await target.accounts.grant(accountId, { amount: toCredits(micro), note });
        console.log(`${micro < 0 ? 'adjusted' : 'granted'} ${toCredits(micro)} credits: ${accountId} now has ${account.balance} available`);
        return ADMIN_EXIT.ok;
      });
    }
    case 'ledger': {
      const {
        positionals: [accountId],
      } = parse(rest, URL_FLAG, 1);
      if (!accountId) throw new UsageError('credits ledger needs an ACCOUNT_ID (see accounts list)');
      return onTarget(rest, async (target) => {
        const entries = await allPages((cursor) => target.accounts.ledger(accountId, { limit: 100, ...(cursor !== undefined && { cursor }) }));
        for (const e of entries.reverse()) console.log(entryLine(e));
        return ADMIN_EXIT.ok;
      });
    }
    case 'reconcile': {
      if (urlFlagOf(rest) !== undefined) throw new UsageError('credits reconcile reads the database: run it on the server, without --url');
      parse(rest, {}, 0);
      return reconcile();
    }
    default:
      throw new UsageError(await usage());
  }
}

async function reconcile(): Promise<number> {
  const store = await createStore(loadSettingsConfig());
  try {
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
    console.log(
      `${ok ? 'reconciled' : 'NOT reconciled'}: ${report.accounts} accounts, ${report.entries} ledger entries, ${report.open} holds open, ` +
        `${report.mismatched.length + report.keysMismatched.length} balance mismatches, ${report.unsettled.length} unsettled, ${report.doubled.length} doubled`,
    );
    return ok ? 0 : 1;
  } finally {
    await store.close();
  }
}
