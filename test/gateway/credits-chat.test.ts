/**
 * Chat credits through the gateway (G206): a hold of the estimate before the upstream is called,
 * settled once to the tokens used: on completion, on a client abort mid-stream and on a
 * mid-stream failure (what was generated is charged, the rest released); a request the account
 * cannot cover is a 402 in the chat error body.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { createSandboxChatProvider } from '../../src/chat/sandbox.js';
import type { LedgerEntry } from '../../src/store/types.js';
import { configFiles } from '../helpers/config-files.js';
import { scriptedProvider, sseData } from '../helpers/chat.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';

const C = 1_000_000;
const files = configFiles('mediagate-chat-credits-');
/** 1 credit per 1,000 prompt tokens, 1 per completion token (1,000 per 1,000): charges are easy to read. */
const PRICES = { chat: { '*': { prompt: 1, completion: 1000 } } };

const providers = {
  endless: scriptedProvider(
    'endless',
    Array.from({ length: 400 }, (_, i) => ({ delayMs: 20, delta: `w${i} ` })),
  ),
  breaks: scriptedProvider('breaks', [{ delta: 'one ' }, { delta: 'two ' }, { delayMs: 20, fail: new Error('connection reset by upstream') }]),
  short: scriptedProvider('short', [{ delta: 'a' }, { delta: 'b' }, { delta: 'c' }]),
};

let h: Harness;
let url: string;
let account: string;

beforeAll(async () => {
  h = await createHarness({
    workers: false,
    env: { MEDIAGATE_CREDITS: 'on', MEDIAGATE_PRICES: files.file(PRICES), MEDIAGATE_CHAT_HOLD_TOKENS: '100' },
    chatProviders: [createSandboxChatProvider({ tokensPerSecond: 0 }), ...Object.values(providers)],
    chatRoutes: { 'chat-2.5-pro': 'endless', 'chat-3.1-pro-preview': 'breaks', 'chat-3-flash-preview': 'short' },
  });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  account = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.accountId;
  await h.store.credits.grant(account, 1000 * C, 'chat tests', Date.now());
});
afterAll(async () => {
  await h.close();
});

const user = (content: string) => ({ role: 'user', content });
const post = (payload: unknown, key = h.key) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...h.auth(key), 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });

/** The hold and the settlement of the account's latest chat request, once it is settled. */
async function lastRequest(): Promise<{ hold: LedgerEntry; settled: LedgerEntry[] }> {
  return waitFor(
    async () => {
      const entries = await h.store.credits.ledger(account);
      const hold = entries.filter((e) => e.kind === 'hold' && e.requestId).at(-1);
      const settled = entries.filter((e) => e.requestId === hold?.requestId && e.kind !== 'hold');
      return hold && settled.length > 0 ? { hold, settled } : undefined;
    },
    5000,
    'the chat request to be settled',
  );
}

async function expectBooksRight(): Promise<void> {
  const report = await h.store.credits.reconcile();
  expect(report).toMatchObject({ mismatched: [], doubled: [], open: 0 });
}

describe('chat credits', () => {
  it('a completed reply holds prompt + max_completion_tokens, then is charged the tokens used; the rest goes back', async () => {
    const before = (await h.store.credits.getAccount(account))!;
    const res = await post({ model: 'chat-3-flash-preview', messages: [user('x')], max_completion_tokens: 50 });
    expect(res.status).toBe(200);
    const { usage } = ((await res.json()) as { data: { usage: Record<string, number> } }).data;
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
    const { hold, settled } = await lastRequest();
    expect(hold.model).toBe('chat-3-flash-preview');
    expect(hold.amountMicro).toBeGreaterThanOrEqual(50 * C); // 50 completion tokens and the prompt's
    const charge = 7 * 1000 + 3 * C; // 7 prompt tokens at 1 credit per 1,000, 3 completion tokens at 1 each
    expect(settled.map((e) => [e.kind, e.amountMicro, e.settledMicro])).toEqual([['capture', charge, hold.amountMicro]]);
    expect((await h.store.credits.getAccount(account))!).toMatchObject({ availableMicro: before.availableMicro - charge, heldMicro: 0 });
    await expectBooksRight();
  });

  it('a client that leaves mid-stream is charged what was generated; the rest of the hold goes back', async () => {
    const { req, res } = await new Promise<{ req: http.ClientRequest; res: http.IncomingMessage }>((resolve, reject) => {
      const r = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers: { ...h.auth(), 'content-type': 'application/json' } }, (response) =>
        resolve({ req: r, res: response }),
      );
      r.on('error', reject);
      r.end(JSON.stringify({ model: 'chat-2.5-pro', messages: [user('go on')], stream: true }));
    });
    let seen = '';
    await new Promise<void>((resolve) =>
      res.on('data', (c: Buffer) => {
        seen += c.toString();
        if (seen.includes('w3 ')) resolve();
      }),
    );
    req.destroy();
    const { hold, settled } = await lastRequest();
    expect(hold.amountMicro).toBeGreaterThanOrEqual(100 * C); // MEDIAGATE_CHAT_HOLD_TOKENS: no max_completion_tokens sent
    expect(settled).toHaveLength(1);
    expect(settled[0]!.kind).toBe('capture');
    expect(settled[0]!.amountMicro).toBeGreaterThan(4 * C - 1); // at least w0..w3 were generated
    expect(settled[0]!.amountMicro).toBeLessThan(hold.amountMicro);
    await expectBooksRight();
  });

  it('a failure mid-stream charges what was generated before it', async () => {
    const res = await post({ model: 'chat-3.1-pro-preview', messages: [user('x')], stream: true, max_completion_tokens: 20 });
    const events = sseData(await res.text());
    expect(events.at(-1)).toMatchObject({ error: { code: 'internal_error' } });
    const { hold, settled } = await lastRequest();
    expect(settled.map((e) => e.kind)).toEqual(['capture']);
    expect(settled[0]!.amountMicro).toBeGreaterThanOrEqual(2 * C); // "one " and "two " were generated
    expect(settled[0]!.amountMicro).toBeLessThan(hold.amountMicro);
    await expectBooksRight();
  });

  it('an account that cannot cover the estimate gets a 402 in the chat body, and nothing is held or called', async () => {
    const calls = providers.short.requests.length;
    const res = await post({ model: 'chat-3-flash-preview', messages: [user('x')], max_completion_tokens: 10 }, h.otherKey);
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({
      code: '402',
      msg: expect.stringMatching(/^Not enough credits: this request costs 10\.\d+ credits and the account has 0 available/),
      data: null,
      success: false,
    });
    expect(providers.short.requests.length).toBe(calls);
    const other = (await h.store.keys.findActiveByHash(hashApiKey(h.otherKey)))!.accountId;
    expect(await h.store.credits.ledger(other)).toEqual([]);
  });
});
