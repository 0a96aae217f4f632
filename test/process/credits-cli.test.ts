/**
 * The operator commands of credits (G205) on a SQLite data directory: accounts, keys of an
 * account, grants, the ledger, reconcile (exit 1 on a mismatch), and the mistakes each refuses.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { ensureBuilt, runCli, runCliAsync } from '../helpers/process.js';

let dataDir: string;
beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir();
}, 200_000);
afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const ENV = () => ({ MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_STARTING_CREDITS: '2.5' });
const cli = (...args: string[]) => runCli(args, ENV());
const cliAsync = (...args: string[]) => runCliAsync(args, ENV());
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1)!;

describe('mediagate accounts and credits', () => {
  it('accounts, keys of an account, grants, the ledger and a clean reconcile', async () => {
    const created = cli('accounts', 'create', '--name', 'acme');
    expect(created.status, created.stderr).toBe(0);
    const account = lastLine(created.stdout);
    expect(account).toMatch(/^acct_[0-9a-f]{12}$/);
    const key = lastLine(cli('keys', 'create', '--name', 'acme-prod', '--account', account).stdout);
    expect(key).toMatch(/^mg_/);
    const own = lastLine(cli('keys', 'create', '--name', 'solo').stdout); // an account of its own, with the starting credit

    const granted = cli('credits', 'grant', account, '10.25', '--note', 'invoice 42');
    expect(granted.status, granted.stderr).toBe(0);
    expect(granted.stdout).toContain(`granted 10.25 credits: ${account} now has 12.75 available`);
    expect(cli('credits', 'grant', account, '-0.75', '--note', 'correction').status).toBe(0);

    const listed = cli('accounts', 'list').stdout.trimEnd().split('\n');
    expect(listed.find((l) => l.startsWith(account))).toMatch(/\tacme\tbalance 12\theld 0\tspent 0\t/);
    expect(listed).toHaveLength(2);
    expect(cli('keys', 'list').stdout).toContain(`\tacme-prod\t${account}\t`);

    const ledger = cli('credits', 'ledger', account)
      .stdout.trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(ledger.map((f) => [f[2], f[3], f[6]])).toEqual([
      ['grant', '2.5', 'starting credit'],
      ['grant', '10.25', 'invoice 42'],
      ['adjust', '-0.75', 'correction'],
    ]);

    const store = openSqliteStore(path.join(dataDir, 'mediagate.db'));
    try {
      expect((await store.keys.findActiveByHash(hashApiKey(key)))?.accountId).toBe(account);
      const solo = (await store.keys.findActiveByHash(hashApiKey(own)))!;
      expect(await store.credits.getAccount(solo.accountId)).toMatchObject({ name: 'solo', availableMicro: 2_500_000 });
    } finally {
      await store.close();
    }
    const keyId = /^(key_[0-9a-f]+)\t.*\tacme-prod\t/m.exec(cli('keys', 'list').stdout)![1]!;
    expect(cli('keys', 'limit', keyId, '--credits', '7.5').stdout).toContain(
      `${keyId}: submits default/s, queries default/s (bursts of twice that; in effect within 10 s); spending cap 7.5 credits`,
    );
    expect(cli('keys', 'limit', keyId, '--submits', '5').stdout).toContain('spending cap 7.5 credits'); // kept when not given
    expect(cli('keys', 'limit', keyId, '--credits', 'none').stdout).toContain('spending cap none');
    expect(cli('keys', 'limit', keyId, '--credits', '0').status).toBe(2);
    const reconciled = cli('credits', 'reconcile');
    expect(reconciled.status, reconciled.stderr).toBe(0);
    expect(reconciled.stdout).toMatch(/^reconciled: 2 accounts, 4 ledger entries, 0 holds open, 0 balance mismatches, 0 unsettled, 0 doubled$/m);
  }, 120_000);

  it('reconcile exits 1 naming the account and the key whose cached totals drifted from the ledger; the ledger refuses changes', () => {
    const account = lastLine(cli('accounts', 'create', '--name', 'drift').stdout);
    const db = new Database(path.join(dataDir, 'mediagate.db'));
    try {
      db.prepare('UPDATE accounts SET available_micro = available_micro + 1 WHERE id = ?').run(account);
      db.prepare(`UPDATE api_keys SET spent_micro = spent_micro + 2000000 WHERE name = 'solo'`).run();
      expect(() => db.prepare('UPDATE ledger SET amount_micro = 0').run()).toThrow(/append-only/);
      expect(() => db.prepare('DELETE FROM ledger').run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
    const r = cli('credits', 'reconcile');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`MISMATCH account ${account}: cached balance 2.500001, held 0, spent 0; ledger balance 2.5, held 0, spent 0`);
    expect(r.stderr).toMatch(/^MISMATCH key key_[0-9a-f]+: cached held 0, spent 2; ledger held 0, spent 0$/m);
    expect(r.stdout).toMatch(/^NOT reconciled: .* 2 balance mismatches/m);
  }, 60_000);

  it('mistakes are usage errors (exit 2) or name what is missing (exit 1)', async () => {
    // each a command of its own that changes nothing: run side by side (G281)
    const amounts = ['0', 'ten', '1.0000001'];
    const [noAccountName, noSuchAccount, noNote, unknown, ledger, frobnicate, ...badAmounts] = await Promise.all([
      cliAsync('accounts', 'create'),
      cliAsync('keys', 'create', '--name', 'x', '--account', 'acct_missing'),
      cliAsync('credits', 'grant', 'acct_x', '5'),
      cliAsync('credits', 'grant', 'acct_missing', '5', '--note', 'n'),
      cliAsync('credits', 'ledger', 'acct_missing'),
      cliAsync('credits', 'frobnicate'),
      ...amounts.map((amount) => cliAsync('credits', 'grant', 'acct_x', amount, '--note', 'n')),
    ]);
    expect(noAccountName!.status).toBe(2);
    expect(noSuchAccount!.stderr).toMatch(/--account acct_missing: no such account/);
    expect([noNote!.status, noNote!.stderr]).toEqual([2, expect.stringMatching(/--note/)]);
    for (const [i, r] of badAmounts.entries()) expect(r.status, amounts[i]).toBe(2);
    expect([unknown!.status, unknown!.stderr]).toEqual([1, expect.stringMatching(/No account with id acct_missing/)]);
    expect(ledger!.status).toBe(1);
    expect(frobnicate!.status).toBe(2);
  }, 120_000);
});
