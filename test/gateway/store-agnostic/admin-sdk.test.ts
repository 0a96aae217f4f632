/**
 * The SDK's `AdminClient` (G313) against a real gateway on a port, over fetch: keys, accounts,
 * grants, the ledger, the audit log and the settings, pages followed by the iterators. And the
 * error classes of the new codes, for every body shape: `KeyExpiredError`, `ModelNotAllowedError`,
 * `CallerOnlyError`, `AdminOnlyError`, read from the standard body's code or, for the videos and
 * chat envelopes (whose `code` is only the status), from the `x-error-code` header (G312).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminClient,
  AdminOnlyError,
  AuthenticationError,
  CallerOnlyError,
  ConflictError,
  KeyExpiredError,
  Mediagate,
  type MediagateError,
  ModelNotAllowedError,
  NotFoundError,
  PermissionDeniedError,
} from '../../../packages/client/src/index.js';
import { ADMIN_KEY } from '../../helpers/admin.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';

let clock = Date.now();
let g: ListeningGateway;
let admin: AdminClient;
beforeAll(async () => {
  g = await listeningGateway({ workers: false, reviewMedia: false, keyClock: () => clock, env: { MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY } });
  admin = new AdminClient({ baseUrl: `${g.origin}/`, apiKey: ADMIN_KEY });
});
afterAll(async () => {
  await g?.close();
});

async function caught(p: Promise<unknown> | (() => Promise<unknown>)): Promise<MediagateError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    return err as MediagateError;
  }
  throw new Error('expected a rejection');
}

describe('AdminClient', () => {
  it('tasks (list, iterate, get with its timeline, cancel), channels and their probe, usage, tasks per minute', async () => {
    const key = await admin.keys.create({ name: 'sdk tasks' });
    const caller = new Mediagate({ baseUrl: g.origin, apiKey: key.key });
    const task = await caller.pic.create({ model: 'pic', prompt: 'x' });
    const page = await admin.tasks.list({ key_id: key.id, status: 'queued', limit: 1 });
    expect(page.data.map((t) => t.id)).toEqual([task.id]);
    const seen: string[] = [];
    for await (const t of admin.tasks.iterate({ key_id: key.id, limit: 1 })) seen.push(t.id);
    expect(seen).toEqual([task.id]);
    expect((await admin.tasks.get(task.id)).timeline.map((e) => e.status)).toEqual(['queued']);
    const cancelled = await admin.tasks.cancel(task.id);
    expect([cancelled.status, cancelled.timeline.at(-1)?.from]).toEqual(['cancelled', 'queued']);
    expect(await caught(admin.tasks.get('task_none'))).toBeInstanceOf(NotFoundError);
    const channels = await admin.channels.list();
    expect(channels.find((c) => c.id === 'sandbox')).toMatchObject({ type: 'sandbox', circuit: { state: 'closed' } });
    expect(await admin.channels.probe('sandbox')).toMatchObject({ ok: true, channel: 'sandbox' });
    const usage = await admin.usage({ group_by: 'key', interval: 'day' });
    expect(usage.data.find((r) => r.group === key.id)).toMatchObject({ submitted: 1, cancelled: 1 });
    const activity = await admin.taskActivity({ minutes: 5 });
    expect([activity.object, activity.data.length]).toEqual(['task_activity', 5]);
    expect(activity.data.reduce((n, m) => n + m.submitted, 0)).toBeGreaterThanOrEqual(1);
    expect(activity.data.reduce((n, m) => n + m.cancelled, 0)).toBeGreaterThanOrEqual(1);
  });

  it('keys: create (the secret once), get, update, iterate, rotate with grace, revoke', async () => {
    const account = await admin.accounts.create({ name: 'sdk' });
    const created = await admin.keys.create({ name: 'sdk key', account_id: account.id, models: ['pic:*'], limits: { submits: 4 } });
    expect(created).toMatchObject({
      object: 'api_key',
      name: 'sdk key',
      account_id: account.id,
      models: ['pic:*'],
      limits: { submits: 4, queries: null },
      key: expect.stringMatching(/^mg_/),
    });
    const caller = new Mediagate({ baseUrl: g.origin, apiKey: created.key });
    expect((await caller.pic.create({ model: 'pic', prompt: 'x' })).object).toBe('image');
    expect(await admin.keys.get(created.id)).not.toHaveProperty('key');
    expect((await admin.keys.update(created.id, { name: 'renamed', expires_at: null })).name).toBe('renamed');
    for (let i = 0; i < 3; i++) await admin.keys.create({ name: `sdk page ${i}`, account_id: account.id });
    const all = [];
    for await (const k of admin.keys.iterate({ account_id: account.id, limit: 1 })) all.push(k.name);
    expect(all.sort()).toEqual(['renamed', 'sdk page 0', 'sdk page 1', 'sdk page 2']);
    const rotated = await admin.keys.rotate(created.id, { grace_seconds: 30 });
    expect(rotated.previous_valid_until).toBe(Math.floor(clock / 1000) + 30);
    expect((await new Mediagate({ baseUrl: g.origin, apiKey: rotated.key }).tasks.list()).data).toHaveLength(1);
    expect((await admin.keys.revoke(created.id)).revoked).toBe(true);
    expect(await caught(admin.keys.rotate(created.id))).toBeInstanceOf(ConflictError);
    expect(await caught(admin.keys.get('key_none'))).toMatchObject({ status: 404, code: 'key_not_found' });
  });

  it('accounts: grants, the ledger by pages, the audit log, the settings', async () => {
    const a = await admin.accounts.create({ name: 'sdk credits' });
    const grant = await admin.accounts.grant(a.id, { amount: 3.5, note: 'sdk' });
    expect(grant).toMatchObject({ object: 'grant', entry: { kind: 'grant', amount: 3.5 }, account: { id: a.id, balance: 3.5 } });
    await admin.accounts.grant(a.id, { amount: -1, note: 'back' });
    const ledger = [];
    for await (const e of admin.accounts.iterateLedger(a.id, { limit: 1 })) ledger.push([e.kind, e.amount]);
    expect(ledger).toEqual([
      ['adjust', -1],
      ['grant', 3.5],
    ]);
    expect((await admin.accounts.ledger(a.id, { kind: ['adjust'] })).data.map((e) => e.amount)).toEqual([-1]);
    const over = await caught(admin.accounts.grant(a.id, { amount: -10, note: 'too much' }));
    expect(over).toBeInstanceOf(ConflictError);
    expect(over.code).toBe('grant_exceeds_available');
    expect((await admin.audit.list({ target: a.id })).data.map((e) => e.action)).toEqual(['account.grant', 'account.grant', 'account.create']);
    const since = Math.floor(clock / 1000) - 60;
    let n = 0;
    for await (const e of admin.audit.iterate({ since, limit: 2 })) {
      expect(e.object).toBe('audit_entry');
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(3);
    const settings = await admin.settings();
    expect(settings.settings.bootstrapAdminKey).toBe('[redacted]');
    expect((await admin.accounts.get(a.id)).balance).toBe(2.5);
    expect(await caught(admin.accounts.get('acct_none'))).toBeInstanceOf(NotFoundError);
  });

  it("options are checked like Mediagate's", () => {
    expect(() => new AdminClient({ baseUrl: '', apiKey: 'x' })).toThrow(TypeError);
    expect(() => new AdminClient({ baseUrl: 'http://x', apiKey: 'two\nlines' })).toThrow(/no API key has/);
  });
});

describe('error classes of the key rules, in every body shape', () => {
  it('AdminOnlyError for a caller key on the admin API; CallerOnlyError for an admin key creating (standard, videos and chat bodies)', async () => {
    const asCaller = new AdminClient({ baseUrl: g.origin, apiKey: g.key });
    const refused = await caught(asCaller.keys.list());
    expect(refused).toBeInstanceOf(AdminOnlyError);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    const asAdmin = new Mediagate({ baseUrl: g.origin, apiKey: ADMIN_KEY });
    for (const p of [
      () => asAdmin.pic.create({ model: 'pic', prompt: 'x' }),
      () => asAdmin.videos.create({ model: 'videos', prompt: 'x', duration: 5 }),
      () => asAdmin.chat.create({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'x' }] }),
    ]) {
      const err = await caught(p);
      expect(err).toBeInstanceOf(CallerOnlyError);
      expect([err.status, err.code]).toEqual([403, 'caller_only']);
    }
  });

  it('ModelNotAllowedError and KeyExpiredError, from the body or the x-error-code header', async () => {
    const k = await admin.keys.create({ name: 'narrow', models: ['pic'], expires_at: Math.floor(clock / 1000) + 60 });
    const client = new Mediagate({ baseUrl: g.origin, apiKey: k.key });
    for (const p of [
      () => client.pic.create({ model: 'pic-pro', prompt: 'x' }),
      () => client.videos.create({ model: 'videos', prompt: 'x', duration: 5 }),
      () => client.chat.create({ model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'x' }] }),
    ]) {
      const err = await caught(p);
      expect(err).toBeInstanceOf(ModelNotAllowedError);
      expect(err.message).toMatch(/may not use model/);
    }
    clock += 60_000;
    for (const p of [
      () => client.pic.create({ model: 'pic', prompt: 'x' }),
      () => client.videos.create({ model: 'videos', prompt: 'x', duration: 5 }),
      () => client.tasks.list(),
    ]) {
      const err = await caught(p);
      expect(err).toBeInstanceOf(KeyExpiredError);
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(err.code).toBe('key_expired');
    }
  });
});
