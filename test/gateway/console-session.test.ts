/**
 * The web console's sessions and files (G360-G365): signing in with a key sets an HttpOnly,
 * SameSite=Strict cookie (Secure under an https public URL, scoped to its path); the cookie
 * authenticates the public and admin APIs as that key, with the same roles; every change made with
 * it needs the CSRF token; it ends at its expiry, at sign-out and when its key is revoked. The
 * built console is served at /console/ under a strict CSP, `/` redirects there.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, adminOptions, withAdmin, type AdminHarness } from '../helpers/admin.js';
import { createHarness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';

const HOUR = 3_600_000;
let clock = Date.now();
let h: AdminHarness;
let consoleDir: string;

beforeAll(async () => {
  consoleDir = tempDir('mediagate-console-');
  fs.mkdirSync(path.join(consoleDir, 'assets'));
  fs.writeFileSync(path.join(consoleDir, 'index.html'), '<!doctype html><script type="module" src="./assets/app-1.js"></script>');
  fs.writeFileSync(path.join(consoleDir, 'assets', 'app-1.js'), 'console.log(1)');
  h = withAdmin(await createHarness(adminOptions({ keyClock: () => clock, consoleDir })));
});
afterAll(async () => {
  await h.close();
});

interface Signed {
  cookie: string;
  setCookie: string;
  csrf: string;
  body: Record<string, any>;
}

async function signIn(key: string, harness: AdminHarness = h): Promise<Signed> {
  const res = await harness.app.inject({ method: 'POST', url: '/console/session', payload: { api_key: key } });
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, setCookie, csrf: res.json().csrf_token, body: res.json() };
}

const call = (s: Signed, method: string, url: string, payload?: object, csrf?: string) =>
  h.app.inject({
    method: method as 'GET',
    url,
    headers: { cookie: s.cookie, ...(csrf !== undefined && { 'x-csrf-token': csrf }) },
    ...(payload && { payload }),
  });

describe('sign-in', () => {
  it('sets an HttpOnly SameSite=Strict cookie for the whole gateway, never the key, and answers the key, role and CSRF token', async () => {
    const s = await signIn(h.key);
    expect(s.setCookie).toMatch(/^mediagate_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(s.setCookie).not.toContain(h.key);
    expect(s.body).toEqual({
      object: 'console_session',
      key: { id: expect.any(String), name: expect.any(String), role: 'caller', account_id: expect.any(String) },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      expires_at: Math.floor((clock + 12 * HOUR) / 1000),
      paths: { power_prefix: '/power', api_prefix: '/api' },
    });
    const again = await call(s, 'GET', '/console/session');
    expect(again.json()).toEqual(s.body);
    const value = s.cookie.slice('mediagate_session='.length);
    expect(await h.store.sessions.find(value)).toBeUndefined(); // the store keeps the value's hash only
    expect(await h.store.sessions.find(createHash('sha256').update(value).digest('hex'))).toMatchObject({ csrfToken: s.csrf });
  });

  it('refuses an unknown key (401 invalid_api_key) and a session-less read of the session (401 session_expired)', async () => {
    const bad = await h.app.inject({ method: 'POST', url: '/console/session', payload: { api_key: 'not-a-key-of-this-gateway' } });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.code).toBe('invalid_api_key');
    expect(bad.headers['set-cookie']).toBeUndefined();
    const none = await h.app.inject({ method: 'GET', url: '/console/session' });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('session_expired');
  });
});

describe('the session as the key', () => {
  it('reads the public API; a change needs the CSRF token (403 csrf_token_invalid without it or with another)', async () => {
    const s = await signIn(h.key);
    expect((await call(s, 'GET', '/v1/tasks')).statusCode).toBe(200);
    const body = { model: 'pic', prompt: 'a lighthouse' };
    for (const csrf of [undefined, 'wrong-token']) {
      const refused = await call(s, 'POST', '/v1/pic/images', body, csrf);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('csrf_token_invalid');
    }
    const list = await call(s, 'GET', '/v1/tasks');
    expect(list.json().data).toEqual([]);
    const made = await call(s, 'POST', '/v1/pic/images', body, s.csrf);
    expect(made.statusCode, made.body).toBe(200);
  });

  it('a bearer key needs no CSRF token even with a session cookie beside it', async () => {
    const s = await signIn(h.key);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { cookie: s.cookie, ...h.auth() },
      payload: { model: 'pic', prompt: 'x' },
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('keeps the roles: a caller session gets 403 admin_only from the admin API, an admin session reads and changes it with the token', async () => {
    const caller = await signIn(h.key);
    const refused = await call(caller, 'GET', '/admin/v1/keys');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('admin_only');
    const admin = await signIn(ADMIN_KEY);
    expect(admin.body.key.role).toBe('admin');
    expect((await call(admin, 'GET', '/admin/v1/keys')).statusCode).toBe(200);
    const noToken = await call(admin, 'POST', '/admin/v1/keys', { name: 'from the console' });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json().error.code).toBe('csrf_token_invalid');
    const made = await call(admin, 'POST', '/admin/v1/keys', { name: 'from the console' }, admin.csrf);
    expect(made.statusCode, made.body).toBe(200);
    const audit = await call(admin, 'GET', '/admin/v1/audit?action=key.create');
    expect(JSON.stringify(audit.json())).toContain(admin.body.key.id);
  });

  it('ends at its expiry (401 session_expired), with the clock stepped past it', async () => {
    const s = await signIn(h.key);
    expect((await call(s, 'GET', '/v1/tasks')).statusCode).toBe(200);
    clock += 12 * HOUR + 1;
    try {
      const res = await call(s, 'GET', '/v1/tasks');
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('session_expired');
    } finally {
      clock -= 12 * HOUR + 1;
    }
  });

  it('sign-out needs the token, clears the cookie and ends the session', async () => {
    const s = await signIn(h.key);
    const noToken = await call(s, 'DELETE', '/console/session');
    expect(noToken.statusCode).toBe(403);
    expect((await call(s, 'GET', '/v1/tasks')).statusCode).toBe(200);
    const out = await call(s, 'DELETE', '/console/session', undefined, s.csrf);
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^mediagate_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
    const after = await call(s, 'GET', '/v1/tasks');
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('session_expired');
  });

  it('ends when its key is revoked', async () => {
    const { id, secret } = await h.newKey({ name: 'revoked while signed in' });
    const s = await signIn(secret);
    expect((await call(s, 'GET', '/v1/tasks')).statusCode).toBe(200);
    expect((await h.admin('POST', `/admin/v1/keys/${id}/revoke`)).status).toBe(200);
    const res = await call(s, 'GET', '/v1/tasks');
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_api_key');
  });

  it('lasts no longer than its key: a key expiring in a minute gives a session of a minute', async () => {
    const expires = Math.floor(clock / 1000) + 60;
    const { secret } = await h.newKey({ name: 'short', expires_at: expires });
    const s = await signIn(secret);
    expect(s.body.expires_at).toBe(expires);
    expect(s.setCookie).toMatch(/Max-Age=(59|60);/); // the key's expiry is in whole seconds, the clock in ms
  });
});

describe('the console files', () => {
  it('serves index.html at /console/ and for app paths, assets cached for good, all under a CSP without inline script', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('./assets/app-1.js');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers['cache-control']).toBe('no-cache');
    const asset = await h.app.inject({ method: 'GET', url: '/console/assets/app-1.js' });
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['cache-control']).toContain('immutable');
    expect((await h.app.inject({ method: 'GET', url: '/console/tasks' })).body).toBe(page.body);
    expect((await h.app.inject({ method: 'GET', url: '/console/assets/none.js' })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: '/console/../package.json' })).statusCode).not.toBe(200);
  });

  it('redirects / and /console to /console/', async () => {
    const root = await h.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/console/');
    expect((await h.app.inject({ method: 'GET', url: '/console' })).headers.location).toBe('/console/');
  });
});

describe('behind an https public URL with a path', () => {
  it('the cookie is Secure and scoped to the path; / redirects under it; a console without files answers 503 saying how to build it', async () => {
    const other = withAdmin(
      await createHarness(adminOptions({ consoleDir: tempDir('mediagate-console-none-'), env: { MEDIAGATE_PUBLIC_URL: 'https://media.example.com/gw' } })),
    );
    try {
      const s = await signIn(other.key, other);
      expect(s.setCookie).toMatch(/; Path=\/gw\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
      expect((await other.app.inject({ method: 'GET', url: '/' })).headers.location).toBe('/gw/console/');
      const page = await other.app.inject({ method: 'GET', url: '/console/' });
      expect(page.statusCode).toBe(503);
      expect(page.body).toContain('npm run build');
      expect(String(page.headers['content-security-policy'])).toContain("img-src 'self' blob: data: https://media.example.com");
    } finally {
      await other.close();
    }
  });
});
