/**
 * Roles both ways (G300, G301): every admin endpoint answers 401 without a key and 403 `admin_only`
 * to a caller key; an admin key gets 403 `caller_only` from every create path of the public API and
 * from chat and asset uploads, each in its family's error body, with nothing created, while it may
 * read. The bootstrap admin key works and is audited; a start whose admin key names a caller key fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createGateway } from '../../src/main/gateway.js';
import { ADMIN_KEY, adminOptions, CREATE_CALLS, errorCodeOf, isErrorBody, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

let h: AdminHarness;
beforeAll(async () => {
  h = withAdmin(await createHarness(adminOptions()));
});
afterAll(async () => {
  await h.close();
});

/** Every admin endpoint, with a body where it takes one. */
const ADMIN_CALLS: Array<[string, string, unknown?]> = [
  ['GET', '/admin/v1/keys'],
  ['POST', '/admin/v1/keys', { name: 'x' }],
  ['GET', '/admin/v1/keys/key_x'],
  ['PATCH', '/admin/v1/keys/key_x', { name: 'y' }],
  ['POST', '/admin/v1/keys/key_x/revoke'],
  ['POST', '/admin/v1/keys/key_x/rotate', {}],
  ['GET', '/admin/v1/accounts'],
  ['POST', '/admin/v1/accounts', { name: 'x' }],
  ['GET', '/admin/v1/accounts/acct_x'],
  ['POST', '/admin/v1/accounts/acct_x/grants', { amount: 1, note: 'n' }],
  ['GET', '/admin/v1/accounts/acct_x/ledger'],
  ['GET', '/admin/v1/audit'],
  ['GET', '/admin/v1/settings'],
  ['GET', '/admin/v1/tasks'],
  ['GET', '/admin/v1/tasks/task_x'],
  ['POST', '/admin/v1/tasks/task_x/cancel'],
  ['GET', '/admin/v1/channels'],
  ['POST', '/admin/v1/channels/chan_x/probe'],
  ['GET', '/admin/v1/usage'],
  ['GET', '/admin/v1/task-activity'],
];

describe('the admin API refuses everyone but admin keys', () => {
  it('the table covers every admin operation of the OpenAPI document', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { tags?: string[] }>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.tags?.includes('admin'))
        .map(([m]) => `${m.toUpperCase()} ${path}`),
    );
    const covered = ADMIN_CALLS.map(([m, url]) => `${m} ${url.replace(/key_x|acct_x|task_x|chan_x/, '{id}')}`);
    expect(documented.sort()).toEqual([...covered].sort());
    for (const name of documented) expect(name.startsWith('GET /admin/v1/') || /^(POST|PATCH) \/admin\/v1\//.test(name), name).toBe(true);
  });

  it.each(ADMIN_CALLS)('%s %s: 401 without a key, 403 admin_only with a caller key (nothing changed)', async (method, url, payload) => {
    const auditBefore = (await h.store.audit.list({ limit: 100 })).length;
    const none = await h.app.inject({ method: method as 'GET', url, ...(payload !== undefined && { payload: payload as object }) });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('missing_api_key');
    const caller = await h.admin(method, url, payload, h.key);
    expect(caller.status).toBe(403);
    expect(caller.json.error).toMatchObject({ code: 'admin_only', type: 'permission_error' });
    expect(caller.headers['x-error-code']).toBe('admin_only');
    expect((await h.store.audit.list({ limit: 100 })).length).toBe(auditBefore);
  });

  it('an unknown or revoked key is a 401 there too; the admin key passes', async () => {
    expect((await h.admin('GET', '/admin/v1/keys', undefined, 'mg_unknown')).json.error.code).toBe('invalid_api_key');
    expect((await h.admin('GET', '/admin/v1/settings')).status).toBe(200);
  });
});

describe('admin keys on the public API', () => {
  it.each(CREATE_CALLS)('POST $path: 403 caller_only in the $style error body; nothing is created', async (call) => {
    const before = await countTasksByStatus(h.store.tasks);
    const res = await h.app.inject({ method: 'POST', url: call.path, headers: h.adminAuth, payload: call.body });
    const json = res.json();
    expect(res.statusCode, res.body).toBe(403);
    expect(isErrorBody(call.style, 403, json), res.body).toBe(true);
    expect(errorCodeOf({ json, headers: res.headers })).toBe('caller_only');
    expect(await countTasksByStatus(h.store.tasks)).toEqual(before);
    // the same call with a caller key is a valid create: the refusal is the role's
    const ok = await h.app.inject({ method: 'POST', url: call.path, headers: h.auth(), payload: call.body });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('an asset upload is 403 caller_only too; reading is allowed (its own tasks, account, webhook secret)', async () => {
    const upload = await h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: h.adminAuth, payload: { url: 'https://example.com/a.png' } });
    expect([upload.statusCode, upload.json().error.code]).toEqual([403, 'caller_only']);
    const tasks = await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: h.adminAuth });
    expect([tasks.statusCode, tasks.json().data]).toEqual([200, []]);
    expect((await h.app.inject({ method: 'GET', url: '/v1/account', headers: h.adminAuth })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/v1/result/task_none', headers: h.adminAuth })).json().error.code).toBe('task_not_found');
    expect((await h.app.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: h.adminAuth })).statusCode).toBe(200);
  });

  it('the bootstrap admin key was stored as an admin key with an account of no credit, audited as bootstrap', async () => {
    const keys = (await h.admin('GET', '/admin/v1/keys?role=admin')).json.data as Array<Record<string, any>>;
    expect(keys.map((k) => [k.name, k.role])).toEqual([['bootstrap-admin', 'admin']]);
    expect((await h.admin('GET', `/admin/v1/accounts/${keys[0]!.account_id}`)).json.balance).toBe(0);
    const audit = (await h.admin('GET', `/admin/v1/audit?target=${keys[0]!.id}`)).json.data as Array<Record<string, any>>;
    expect(audit.map((e) => [e.actor, e.action, e.request_id])).toEqual([['bootstrap', 'key.create', null]]);
    expect(JSON.stringify(audit)).not.toContain(ADMIN_KEY);
  });
});

describe('bootstrap admin key at start', () => {
  it('an admin key naming an existing caller key stops the start; restarting with it again is idempotent', async () => {
    const dataDir = tempDir();
    const store = openMemoryStore();
    const env = {
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      MEDIAGATE_WORKERS: '0',
      MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
    };
    const first = await createGateway(loadConfig({ ...env, MEDIAGATE_BOOTSTRAP_KEY: 'caller-key-0123456789' }), { store });
    await first.app.close();
    await expect(createGateway(loadConfig({ ...env, MEDIAGATE_BOOTSTRAP_ADMIN_KEY: 'caller-key-0123456789' }), { store })).rejects.toThrow(
      /^MEDIAGATE_BOOTSTRAP_ADMIN_KEY: names an existing caller key/,
    );
    const second = await createGateway(loadConfig({ ...env, MEDIAGATE_BOOTSTRAP_ADMIN_KEY: 'admin-key-0123456789' }), { store });
    const third = await createGateway(loadConfig({ ...env, MEDIAGATE_BOOTSTRAP_ADMIN_KEY: 'admin-key-0123456789' }), { store });
    expect((await store.keys.list()).map((k) => k.role)).toEqual(['caller', 'admin']);
    await second.app.close();
    await third.close(100);
  });
});
