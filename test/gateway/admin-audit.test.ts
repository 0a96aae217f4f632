/**
 * The audit log (G302) through HTTP: every admin request that changes something writes exactly one
 * entry (who, what, target, when, the request id) and no secret; reads and refused changes write
 * none; the log filters by actor, action, target and time, in pages. And `GET /admin/v1/settings`
 * (G311): the effective configuration with every secret redacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED, settingsView } from '../../src/admin/settings-view.js';
import { loadConfig } from '../../src/config.js';
import { CLIENT_GROUP, SETTINGS } from '../../src/settings/table.js';
import { ADMIN_KEY, adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { configFiles } from '../helpers/config-files.js';
import { createHarness } from '../helpers/harness.js';

const METRICS_TOKEN = 'metrics-token-0123456789-secret';
let h: AdminHarness;
let adminId: string;
beforeAll(async () => {
  h = withAdmin(
    await createHarness(adminOptions({ env: { MEDIAGATE_METRICS_TOKEN: METRICS_TOKEN, MEDIAGATE_BOOTSTRAP_KEY: 'bootstrap-caller-key-0123456789' } })),
  );
  adminId = (await h.admin('GET', '/admin/v1/keys?role=admin')).json.data[0].id as string;
});
afterAll(async () => {
  await h.close();
});

const entries = async (query = ''): Promise<Array<Record<string, any>>> => (await h.admin('GET', `/admin/v1/audit?limit=100${query}`)).json.data;

describe('every change is audited once, with the request id and no secret', () => {
  it('each change of the admin API: one entry naming actor, action, target and request', async () => {
    const secrets: string[] = [];
    const changes: Array<{
      action: string;
      run: () => Promise<{ status: number; json: Record<string, any>; headers: Record<string, unknown> }>;
      target: () => string;
      details?: () => Record<string, unknown>;
    }> = [];
    let keyId = '';
    let accountId = '';
    changes.push({
      action: 'account.create',
      run: () => h.admin('POST', '/admin/v1/accounts', { name: 'audited' }),
      target: () => accountId,
      details: () => ({ name: 'audited' }),
    });
    changes.push({
      action: 'account.grant',
      run: () => h.admin('POST', `/admin/v1/accounts/${accountId}/grants`, { amount: 4.25, note: 'audit note' }),
      target: () => accountId,
      details: () => ({ amount: 4.25, note: 'audit note' }),
    });
    changes.push({
      action: 'key.create',
      run: () => h.admin('POST', '/admin/v1/keys', { name: 'audited key', account_id: accountId, models: ['pic'] }),
      target: () => keyId,
      details: () => ({ name: 'audited key', role: 'caller', account_id: accountId, models: ['pic'], new_account: false }),
    });
    changes.push({
      action: 'key.update',
      run: () => h.admin('PATCH', `/admin/v1/keys/${keyId}`, { limits: { submits: 3 } }),
      target: () => keyId,
      details: () => ({ limits: { submits: 3 } }),
    });
    changes.push({
      action: 'key.rotate',
      run: () => h.admin('POST', `/admin/v1/keys/${keyId}/rotate`, { grace_seconds: 10 }),
      target: () => keyId,
      details: () => ({ grace_seconds: 10 }),
    });
    changes.push({ action: 'key.revoke', run: () => h.admin('POST', `/admin/v1/keys/${keyId}/revoke`), target: () => keyId, details: () => ({}) });
    for (const change of changes) {
      const before = (await entries()).length;
      const res = await change.run();
      expect(res.status, `${change.action}: ${JSON.stringify(res.json)}`).toBe(200);
      if (change.action === 'account.create') accountId = res.json.id as string;
      if (change.action === 'key.create') keyId = res.json.id as string;
      if (typeof res.json.key === 'string') secrets.push(res.json.key);
      const after = await entries();
      expect(after.length, change.action).toBe(before + 1);
      expect(after[0]).toMatchObject({
        object: 'audit_entry',
        actor: adminId,
        action: change.action,
        target: change.target(),
        request_id: res.headers['x-request-id'],
        created: expect.any(Number),
      });
      expect(after[0]!.details).toMatchObject(change.details?.() ?? {});
    }
    const log = JSON.stringify(await entries());
    for (const secret of [...secrets, ADMIN_KEY]) {
      expect(log).not.toContain(secret);
      expect(log).not.toContain(secret.slice(3, 15));
    }
  });

  it('reads and refused changes write nothing', async () => {
    const before = await entries();
    const account = (await h.admin('GET', '/admin/v1/accounts?limit=1')).json.data[0].id as string;
    await h.admin('GET', '/admin/v1/keys');
    await h.admin('GET', '/admin/v1/settings');
    await h.admin('GET', `/admin/v1/accounts/${account}/ledger`);
    expect((await h.admin('POST', '/admin/v1/keys', { name: '' })).status).toBe(400);
    expect((await h.admin('PATCH', '/admin/v1/keys/key_none', { name: 'x' })).status).toBe(404);
    const someKey = (await h.admin('GET', '/admin/v1/keys?limit=1')).json.data[0].id as string;
    expect((await h.admin('PATCH', `/admin/v1/keys/${someKey}`, {})).status).toBe(200); // asks for no change
    expect((await h.admin('PATCH', `/admin/v1/keys/${someKey}`, { limits: {} })).status).toBe(200);
    expect((await h.admin('POST', `/admin/v1/accounts/${account}/grants`, { amount: -1e6, note: 'x' })).status).toBe(409);
    expect((await h.admin('POST', '/admin/v1/keys', { name: 'x' }, h.key)).status).toBe(403);
    expect(await entries()).toEqual(before);
  });

  it('names the actor key as it is now (actor_name, G449); none for bootstrap and cli', async () => {
    const bootstrapped = await entries('&actor=bootstrap');
    expect(bootstrapped.map((e) => e.actor_name)).toEqual([null, null]);
    const mine = await entries(`&actor=${adminId}`);
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((e) => e.actor_name))).toEqual(new Set(['bootstrap-admin']));
    // renamed: every entry of the key reads the new name (the log itself is append-only)
    expect((await h.admin('PATCH', `/admin/v1/keys/${adminId}`, { name: 'ops-renamed' })).status).toBe(200);
    const after = await entries(`&actor=${adminId}`);
    expect(after).toHaveLength(mine.length + 1); // the rename is one more change of the key
    expect(new Set(after.map((e) => e.actor_name))).toEqual(new Set(['ops-renamed']));
    expect((await h.admin('PATCH', `/admin/v1/keys/${adminId}`, { name: 'bootstrap-admin' })).status).toBe(200);
  });

  it('filters by actor, action, target and time; pages by cursor', async () => {
    const all = await entries();
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect((await entries('&actor=bootstrap')).map((e) => e.action)).toEqual(['key.create', 'key.create']); // the two bootstrap keys
    expect((await entries(`&actor=${adminId}&action=key.create`)).every((e) => e.action === 'key.create' && e.actor === adminId)).toBe(true);
    const target = all.find((e) => e.action === 'key.revoke')!.target as string;
    expect((await entries(`&target=${target}`)).map((e) => e.action)).toEqual(['key.revoke', 'key.rotate', 'key.update', 'key.create']);
    const newest = all[0]!.created as number;
    expect(await entries(`&since=${newest + 1}`)).toEqual([]);
    expect((await entries(`&until=${new Date((newest + 1) * 1000).toISOString()}`)).length).toBe(all.length);
    const page1 = (await h.admin('GET', '/admin/v1/audit?limit=2')).json;
    const page2 = (await h.admin('GET', `/admin/v1/audit?limit=2&cursor=${page1.next_cursor}`)).json;
    expect([...page1.data, ...page2.data]).toEqual(all.slice(0, 4));
    for (const [q, param] of [
      ['action=key.delete', 'action'],
      ['since=tomorrow', 'since'],
      ['until=1e9', 'until'],
      ['limit=500', 'limit'],
      [`actor=cli&cursor=${page1.next_cursor}`, 'cursor'],
    ]) {
      const res = await h.admin('GET', `/admin/v1/audit?${q}`);
      expect([res.status, res.json.error.param], q).toEqual([400, param]);
    }
  });
});

describe('settings', () => {
  it('GET /admin/v1/settings answers the configuration in force, its secrets redacted', async () => {
    const res = await h.admin('GET', '/admin/v1/settings');
    expect(res.json.object).toBe('settings');
    const settings = res.json.settings as Record<string, any>;
    expect(settings).toMatchObject({
      apiPrefix: '/api',
      powerPrefix: '/power',
      bootstrapKey: REDACTED,
      bootstrapAdminKey: REDACTED,
      signingSecret: REDACTED,
      observability: { metrics: { token: REDACTED } },
    });
    const variables = new Map((res.json.variables as Array<Record<string, any>>).map((v) => [v.name, v]));
    // by environment variable too (G447): the value in force, and whether the environment set it
    expect(variables.get('MEDIAGATE_API_PREFIX')).toEqual({ name: 'MEDIAGATE_API_PREFIX', group: 'Server', value: '/api', set: true });
    expect(variables.get('MEDIAGATE_METRICS_TOKEN')).toMatchObject({ value: REDACTED, set: true });
    expect(variables.get('MEDIAGATE_BOOTSTRAP_ADMIN_KEY')).toMatchObject({ value: REDACTED, set: true });
    expect(variables.get('MEDIAGATE_CHAT_UPSTREAM_KEY')).toMatchObject({ value: null, set: false });
    const text = JSON.stringify(res.json);
    for (const secret of [METRICS_TOKEN, ADMIN_KEY, 'bootstrap-caller-key-0123456789', h.config.signingSecret!]) expect(text).not.toContain(secret);
  });

  it('every secret setting is redacted, whatever holds it (service URLs, upstream keys, exporter headers); other values are kept', () => {
    const { file } = configFiles('mediagate-settings-view-');
    const secrets = {
      db: 'db-password-53cr3t',
      redis: 'redis-password-53cr3t',
      qs: 'query-password-53cr3t',
      chat: 'sk-chat-upstream-53cr3t',
      prov: 'r8_provider-53cr3t',
      otel: 'otel-bearer-53cr3t',
      metrics: 'metrics-token-53cr3t-0123',
      boot: 'bootstrap-53cr3t-0123',
      admin: 'bootstrap-admin-53cr3t-01',
      signing: 'signing-secret-53cr3t-0123456789abcdef',
    };
    const config = loadConfig({
      MEDIAGATE_DATABASE_URL: `postgres://mediagate:${secrets.db}@db.internal:5432/mg?sslmode=require&password=${secrets.qs}`,
      MEDIAGATE_REDIS_URL: `redis://:${secrets.redis}@cache.internal:6379/0`,
      MEDIAGATE_PROVIDERS: file({
        providers: {
          rep: { type: 'gemini', apiKeyEnv: 'REP_KEY' },
          oai: { type: 'openai-chat', baseUrl: 'https://api.openai.example/v1', apiKeyEnv: 'CHAT_KEY' },
        },
        routes: { 'chat-2.5-flash': [{ provider: 'oai', model: 'gpt-x' }] },
      }),
      REP_KEY: secrets.prov,
      CHAT_KEY: secrets.chat,
      MEDIAGATE_OTEL: 'on',
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${secrets.otel},x-team=media`,
      MEDIAGATE_METRICS_TOKEN: secrets.metrics,
      MEDIAGATE_BOOTSTRAP_KEY: secrets.boot,
      MEDIAGATE_BOOTSTRAP_ADMIN_KEY: secrets.admin,
      MEDIAGATE_SIGNING_SECRET: secrets.signing,
      MEDIAGATE_WORKER_CONCURRENCY: '7',
      MEDIAGATE_PRICES: file({ models: { pic: 3 } }),
    });
    const both = settingsView(config);
    const view = both.settings as Record<string, any>;
    const text = JSON.stringify(both);
    for (const [what, secret] of Object.entries(secrets)) expect(text, what).not.toContain(secret);
    expect(view.databaseUrl).toBe(
      `postgres://mediagate:${encodeURIComponent(REDACTED)}@db.internal:5432/mg?sslmode=require&password=${encodeURIComponent(REDACTED)}`,
    );
    expect(view.workerConcurrency).toBe(7);
    // counts of model tokens are shown (the metrics token, a secret, is not: checked above)
    expect(view.credits.chatHoldTokens).toEqual(expect.any(Number));
    expect(view.sandboxChatTokensPerSecond).toEqual(expect.any(Number));
    expect(view.observability.tracing.headers).toEqual({ authorization: REDACTED, 'x-team': REDACTED });
    expect(view.providers.providers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'rep', type: 'gemini', apiKey: REDACTED }),
        expect.objectContaining({ id: 'oai', baseUrl: 'https://api.openai.example/v1', apiKey: REDACTED, keySetting: expect.stringContaining('CHAT_KEY') }),
      ]),
    );
    expect(view.credits.prices).toMatchObject({ models: { pic: 3 } });
    // by environment variable (G447): every server setting in the table's order, the client commands' left out
    const serverRows = Object.entries(SETTINGS).filter(([, row]) => row.group !== CLIENT_GROUP);
    expect(both.variables.map((v) => v.name)).toEqual(serverRows.map(([name]) => name));
    expect(both.variables.map((v) => v.name)).not.toContain('MEDIAGATE_API_KEY');
    const variable = (name: string) => both.variables.find((v) => v.name === name);
    expect(variable('MEDIAGATE_DATABASE_URL')).toEqual({
      name: 'MEDIAGATE_DATABASE_URL',
      group: 'Store',
      value: view.databaseUrl, // the host and database kept, the credentials not
      set: true,
    });
    expect(variable('MEDIAGATE_REDIS_URL')?.value).toBe(`redis://:${encodeURIComponent(REDACTED)}@cache.internal:6379/0`);
    expect(variable('MEDIAGATE_WORKER_CONCURRENCY')).toMatchObject({ value: 7, set: true });
    expect(variable('MEDIAGATE_BODY_LIMIT')).toMatchObject({ value: config.bodyLimit, set: false }); // the default, in force
    expect(variable('OTEL_EXPORTER_OTLP_HEADERS')).toMatchObject({ value: REDACTED, set: true });
    expect(variable('MEDIAGATE_SIGNING_SECRET')).toMatchObject({ value: REDACTED, set: true });
    expect(variable('MEDIAGATE_PRICES')?.value).toMatchObject({ models: { pic: 3 } });
  });

  it('a URL whose user name stands alone (a token in that place) has it redacted', () => {
    const config = loadConfig({ MEDIAGATE_REDIS_URL: 'rediss://tok-53cr3t-user@cache.internal:6380' });
    const both = settingsView(config);
    expect(JSON.stringify(both)).not.toContain('tok-53cr3t-user');
    expect(both.settings.redisUrl).toBe(`rediss://${encodeURIComponent(REDACTED)}@cache.internal:6380`);
  });
});
