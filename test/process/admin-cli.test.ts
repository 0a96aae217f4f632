/**
 * The `mediagate keys|accounts|credits` commands (G314) as an operator runs them: through a
 * gateway's admin API (`--url`, MEDIAGATE_ADMIN_KEY; the gateway listens on a port, the command is a
 * child process) and on the database when run on the server, where each change is audited as `cli`.
 * Both print the same. And the client commands' exit codes for a key's refusals (G315).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { ADMIN_KEY } from '../helpers/admin.js';
import { tempDir } from '../helpers/temp-root.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { ensureBuilt, runCliAsync } from '../helpers/process.js';

let g: ListeningGateway;
let dataDir: string;
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1)!;
const remote = (args: string[], key = ADMIN_KEY) =>
  runCliAsync([...args, '--url', g.origin], { MEDIAGATE_ADMIN_KEY: key, MEDIAGATE_DATA_DIR: '/nonexistent-dir-never-opened' });
const local = (args: string[]) => runCliAsync(args, { MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_STARTING_CREDITS: '1.5' });

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('mediagate-admin-cli-');
  g = await listeningGateway({ workers: false, reviewMedia: false, env: { MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, MEDIAGATE_STARTING_CREDITS: '2' } });
}, 240_000);
afterAll(async () => {
  await g?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('remotely, through the admin API (--url)', () => {
  it('accounts, keys, limits, grants, the ledger, rotate and revoke; each change audited as the admin key', async () => {
    const account = lastLine((await remote(['accounts', 'create', '--name', 'remote acme'])).stdout);
    expect(account).toMatch(/^acct_/);
    const created = await remote([
      'keys',
      'create',
      '--name',
      'remote key',
      '--account',
      account,
      '--models',
      'pic,clip:*',
      '--expires-at',
      '2099-01-01T00:00:00Z',
    ]);
    expect(created.status, created.stderr).toBe(0);
    const secret = lastLine(created.stdout);
    expect(secret).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
    const record = (await g.app.inject({ method: 'GET', url: '/admin/v1/keys?q=remote%20key', headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()
      .data[0];
    expect(record).toMatchObject({ account_id: account, models: ['pic', 'clip:*'], expires_at: 4_070_908_800 });
    const limited = await remote(['keys', 'limit', record.id, '--submits', '9', '--credits', '2.5', '--tasks-in-flight', '4']);
    expect(limited.stdout).toContain(
      `${record.id}: submits 9/s, queries default/s (bursts of twice that; in effect within 10 s); spending cap 2.5 credits; tasks in flight 4`,
    );
    const listed = await remote(['keys', 'list', '--account', account]);
    expect(listed.stdout).toMatch(new RegExp(`^${record.id}\\tcaller\\tremote key\\t${account}\\t.*\\tactive\\twebhook none\\tmodels pic,clip:\\*$`, 'm'));
    expect(listed.stdout).not.toContain(secret);
    expect((await remote(['credits', 'grant', account, '-0.5', '--note', 'remote correction'])).stdout).toContain(
      `adjusted -0.5 credits: ${account} now has 1.5 available`,
    );
    const ledger = (await remote(['credits', 'ledger', account])).stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(ledger.map((f) => [f[2], f[3], f[6]])).toEqual([
      ['grant', '2', 'starting credit'],
      ['adjust', '-0.5', 'remote correction'],
    ]);
    const rotated = await remote(['keys', 'rotate', record.id, '--grace', '60']);
    expect(rotated.stderr).toMatch(/the old one works until/);
    expect(lastLine(rotated.stdout)).not.toBe(secret);
    expect((await remote(['keys', 'revoke', record.id])).stdout).toContain(`revoked ${record.id}`);
    const adminId = (await g.store.keys.list()).find((k) => k.role === 'admin')!.id;
    const audit = await g.store.audit.list({ limit: 50 });
    expect(audit.filter((e) => e.target === record.id || e.target === account).map((e) => [e.actor, e.action])).toEqual([
      [adminId, 'key.revoke'],
      [adminId, 'key.rotate'],
      [adminId, 'account.grant'],
      [adminId, 'key.update'],
      [adminId, 'key.create'],
      [adminId, 'account.create'],
    ]);
  }, 240_000);

  it("refusals exit 1 with the gateway's message (flags named as flags); usage errors exit 2 before anything is sent; no gateway exits 5", async () => {
    // each a command of its own that changes nothing: run side by side (G281)
    const [over, badModel, asCaller, noKey, reconcile, down, withPassword] = await Promise.all([
      remote(['credits', 'grant', 'acct_none', '5', '--note', 'x']),
      remote(['keys', 'create', '--name', 'x', '--models', 'pic,dall-e']),
      remote(['keys', 'list'], g.key),
      runCliAsync(['keys', 'list', '--url', g.origin], { MEDIAGATE_ADMIN_KEY: '' }),
      remote(['credits', 'reconcile']),
      runCliAsync(['accounts', 'list', '--url', 'http://127.0.0.1:9'], { MEDIAGATE_ADMIN_KEY: ADMIN_KEY }),
      runCliAsync(['keys', 'list', '--url', g.origin.replace('://', '://ops:hunter2@')], { MEDIAGATE_ADMIN_KEY: ADMIN_KEY }),
    ]);
    expect([over.status, over.stderr]).toEqual([1, expect.stringMatching(/No account with id acct_none/)]);
    expect([badModel.status, badModel.stderr]).toEqual([1, expect.stringMatching(/^--models must be a model of this gateway .*"dall-e"/m)]);
    expect([asCaller.status, asCaller.stderr]).toEqual([1, expect.stringMatching(/needs an admin key/)]);
    expect([noKey.status, noKey.stderr]).toEqual([2, expect.stringMatching(/MEDIAGATE_ADMIN_KEY/)]);
    expect(reconcile.status).toBe(2);
    expect(down.status).toBe(5);
    expect(down.stderr).not.toContain(ADMIN_KEY);
    // a URL with a password: a usage error that never prints it (fetch's own error quoted it twice, exit 5) (G459)
    expect([withPassword.status, withPassword.stderr]).toEqual([2, expect.stringMatching(/^--url holds a user name or password/)]);
    expect(withPassword.stderr).not.toContain('hunter2');
  }, 240_000);
});

describe('on the server (the database)', () => {
  it('the same commands change the database directly, each change audited as cli', async () => {
    const account = lastLine((await local(['accounts', 'create', '--name', 'local acme'])).stdout);
    const created = await local(['keys', 'create', '--name', 'ops', '--role', 'admin']);
    expect(created.stderr).toMatch(/Created admin API key key_\w+ \(ops\)/);
    const caller = await local(['keys', 'create', '--name', 'local key', '--account', account]);
    expect(caller.status, caller.stderr).toBe(0);
    expect((await local(['credits', 'grant', account, '3', '--note', 'local grant'])).stdout).toContain(`granted 3 credits: ${account} now has 4.5 available`);
    const keyId = /^(key_\w+)\tcaller\tlocal key\t/m.exec((await local(['keys', 'list'])).stdout)![1]!;
    expect((await local(['keys', 'update', keyId, '--models', 'videos:*', '--expires-at', 'never'])).stdout).toContain('models videos:*');
    const store = openSqliteStore(path.join(dataDir, 'mediagate.db'));
    try {
      const audit = await store.audit.list({ limit: 50 });
      expect(audit.map((e) => [e.actor, e.action, e.requestId])).toEqual([
        ['cli', 'key.update', null],
        ['cli', 'account.grant', null],
        ['cli', 'key.create', null],
        ['cli', 'key.create', null],
        ['cli', 'account.create', null],
      ]);
      expect((await store.keys.list()).map((k) => [k.name, k.role])).toEqual([
        ['ops', 'admin'],
        ['local key', 'caller'],
      ]);
      expect(JSON.stringify(audit)).not.toContain(lastLine(caller.stdout));
    } finally {
      await store.close();
    }
  }, 240_000);
});

describe("client commands: a key's refusals have exit codes of their own", () => {
  it('7 for an expired key, 8 for a model the key may not use (and for an admin key)', async () => {
    const narrow = (
      await g.app.inject({
        method: 'POST',
        url: '/admin/v1/keys',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { name: 'narrow', models: ['pic'] },
      })
    ).json();
    const env = (key: string) => ({ MEDIAGATE_URL: g.origin, MEDIAGATE_API_KEY: key });
    const [notAllowed, adminKey] = await Promise.all([
      runCliAsync(['generate', 'chat', '--model', 'chat-2.5-flash', '--prompt', 'hi'], env(narrow.key as string)),
      runCliAsync(['generate', 'image', '--model', 'pic', '--prompt', 'x', '--no-wait'], env(ADMIN_KEY)),
    ]);
    expect([notAllowed.status, notAllowed.stderr]).toEqual([8, expect.stringMatching(/may not use model chat-2.5-flash[\s\S]*may not use that model/)]);
    expect([adminKey.status, adminKey.stderr]).toEqual([8, expect.stringMatching(/admin key/)]);
    await g.store.keys.update(narrow.id as string, { expiresAt: Date.now() - 1000 });
    const expired = await runCliAsync(['tasks', 'list'], env(narrow.key as string));
    expect([expired.status, expired.stderr]).toEqual([7, expect.stringMatching(/key_expired[\s\S]*has expired/)]);
  }, 240_000);
});
