/**
 * `/admin/v1/accounts` through HTTP (G309, G310): accounts with their balance, held and spent
 * credits; grants, and negative grants that take back at most what is available (never what tasks
 * hold), refused whole with a 409 naming both amounts; the ledger newest first, in pages; bad input
 * 400 naming the field, unknown ids 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions({ env: { MEDIAGATE_STARTING_CREDITS: '2.5', MEDIAGATE_CREDITS: 'on' } })));
});
afterAll(async () => {
  await h.close();
});

const createAccount = async (name: string): Promise<Record<string, any>> => {
  const res = await h.admin('POST', '/admin/v1/accounts', { name });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json;
};

describe('accounts', () => {
  it('a new account has MEDIAGATE_STARTING_CREDITS; it is read and listed with its balance, held and spent', async () => {
    const a = await createAccount('Acme Corp');
    expect(a).toEqual({
      id: expect.stringMatching(/^acct_[0-9a-f]{12}$/),
      object: 'account',
      name: 'Acme Corp',
      created: expect.any(Number),
      balance: 2.5,
      held: 0,
      spent: 0,
    });
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}`)).json).toEqual(a);
    const listed = (await h.admin('GET', '/admin/v1/accounts?q=acme')).json;
    expect(listed).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(listed.data).toContainEqual(a);
  });

  it('lists newest first in pages; bad paging is a 400 naming it; unknown ids are 404 account_not_found', async () => {
    for (let i = 0; i < 3; i++) await createAccount(`page-${i}`);
    const first = (await h.admin('GET', '/admin/v1/accounts?q=page-&limit=2')).json;
    const second = (await h.admin('GET', `/admin/v1/accounts?q=page-&limit=2&cursor=${first.next_cursor}`)).json;
    const names = [...first.data, ...second.data].map((a: { name: string }) => a.name);
    expect(new Set(names)).toEqual(new Set(['page-0', 'page-1', 'page-2']));
    expect(second.has_more).toBe(false);
    expect((await h.admin('GET', `/admin/v1/accounts?limit=2&cursor=${first.next_cursor}`)).json.error.param).toBe('cursor');
    for (const [method, url, body] of [
      ['GET', '/admin/v1/accounts/acct_none'],
      ['GET', '/admin/v1/accounts/acct_none/ledger'],
      ['POST', '/admin/v1/accounts/acct_none/grants', { amount: 1, note: 'x' }],
    ] as const) {
      const res = await h.admin(method, url, body);
      expect([res.status, res.json.error.code], url).toEqual([404, 'account_not_found']);
    }
    expect((await h.admin('POST', '/admin/v1/accounts', { name: '' })).json.error.param).toBe('name');
    expect((await h.admin('POST', '/admin/v1/accounts', { name: 'x', credits: 5 })).json.error.param).toBe('credits');
  });
});

describe('grants', () => {
  it.each([
    [{ note: 'x' }, 'amount', /amount is required/],
    [{ amount: 0, note: 'x' }, 'amount', /non-zero/],
    [{ amount: 0.0000001, note: 'x' }, 'amount', /at most 6 decimals/],
    [{ amount: 1e12, note: 'x' }, 'amount', /amount must be <= 999999999.999999/],
    [{ amount: '5', note: 'x' }, 'amount', /amount must be a number/],
    [{ amount: 5 }, 'note', /note is required/],
    [{ amount: 5, note: '' }, 'note', /note must not be empty/],
  ])('%j is a 400 naming %s; nothing is written', async (body, param, message) => {
    const a = await createAccount('bad grants');
    const res = await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, body);
    expect([res.status, res.json.error.param]).toEqual([400, param]);
    expect(res.json.error.message).toMatch(message);
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger`)).json.data).toHaveLength(1); // the starting credit only
  });

  it('a grant answers its entry and the account after it; a negative one takes back at most what is available, never what is held', async () => {
    const a = await createAccount('holds');
    const granted = (await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: 7.5, note: 'invoice 7' })).json;
    expect(granted).toEqual({
      object: 'grant',
      entry: {
        id: expect.any(Number),
        object: 'ledger_entry',
        kind: 'grant',
        amount: 7.5,
        settled: null,
        key_id: null,
        task_id: null,
        request_id: null,
        model: null,
        note: 'invoice 7',
        created: expect.any(Number),
      },
      account: { ...a, balance: 10 },
    });
    // tasks of a key of the account hold credits (no worker: they stay queued and keep their holds)
    const key = await h.newKey({ account_id: a.id });
    for (let i = 0; i < 2; i++) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: { authorization: `Bearer ${key.secret}` },
        payload: { model: 'pic-pro', prompt: `${i}` },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const held = (await h.admin('GET', `/admin/v1/accounts/${a.id}`)).json;
    expect(held).toMatchObject({ balance: 2, held: 8, spent: 0 });
    const ledgerBefore = (await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=100`)).json.data;
    const auditBefore = (await h.admin('GET', `/admin/v1/audit?target=${a.id}`)).json.data;

    const refused = await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: -2.000001, note: 'too much' });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'grant_exceeds_available', param: 'amount' });
    expect(refused.json.error.message).toMatch(/-2.000001 would take back more than .* has available \(2 credits; 8 more are held/);
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}`)).json).toEqual(held);
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=100`)).json.data).toEqual(ledgerBefore);
    expect((await h.admin('GET', `/admin/v1/audit?target=${a.id}`)).json.data).toEqual(auditBefore);

    const taken = (await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: -2, note: 'all that is free' })).json;
    expect(taken.entry).toMatchObject({ kind: 'adjust', amount: -2, note: 'all that is free' });
    expect(taken.account).toMatchObject({ balance: 0, held: 8, spent: 0 });
    expect((await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: -0.000001, note: 'one more' })).status).toBe(409);
  });

  it('grants stop at 999999999.999999 credits available: balances stay exact (G442)', async () => {
    const a = (await h.admin('POST', '/admin/v1/accounts', { name: 'rich' })).json;
    const room = Math.round((999999999.999999 - a.balance) * 1e6) / 1e6; // what the starting credit left
    expect((await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: room, note: 'all' })).status).toBe(200);
    const over = await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: 0.000001, note: 'tiny' });
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({ code: 'grant_exceeds_maximum', param: 'amount' });
    expect(over.json.error.message).toBe(
      `amount 0.000001 would take account ${a.id}'s available credit (999999999.999999) over the most an account may have available (999999999.999999 credits)`,
    );
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}`)).json).toMatchObject({ balance: 999999999.999999, held: 0 });
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=100`)).json.data.map((e: { note: string }) => e.note)).not.toContain('tiny');
  });

  it('the ledger: newest first, in pages, filtered by kind', async () => {
    const a = await createAccount('ledger');
    for (let i = 1; i <= 3; i++) await h.admin('POST', `/admin/v1/accounts/${a.id}/grants`, { amount: i, note: `grant ${i}` });
    const key = await h.newKey({ account_id: a.id });
    await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: { authorization: `Bearer ${key.secret}` }, payload: { model: 'pic', prompt: 'x' } });
    const all = (await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger`)).json.data as Array<Record<string, any>>;
    expect(all.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', 1],
      ['grant', 3],
      ['grant', 2],
      ['grant', 1],
      ['grant', 2.5],
    ]);
    expect(all[0]).toMatchObject({ key_id: key.id, task_id: expect.stringMatching(/^task_/), model: 'pic' });
    const page1 = (await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=2`)).json;
    const page2 = (await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=2&cursor=${page1.next_cursor}`)).json;
    const page3 = (await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?limit=2&cursor=${page2.next_cursor}`)).json;
    expect([...page1.data, ...page2.data, ...page3.data]).toEqual(all);
    expect(page3).toMatchObject({ has_more: false, next_cursor: null });
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?kind=hold,capture`)).json.data.map((e: { kind: string }) => e.kind)).toEqual(['hold']);
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?kind=refund`)).json.error).toMatchObject({ param: 'kind' });
    expect((await h.admin('GET', `/admin/v1/accounts/${a.id}/ledger?kind=grant&cursor=${page1.next_cursor}`)).json.error.param).toBe('cursor');
  });
});
