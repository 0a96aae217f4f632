/**
 * Key changes across processes (G316): two gateway processes (`mediagate serve --role api`) share
 * one PostgreSQL database. A key used on process A (its hash cached there, its records read there)
 * and then revoked through process B's admin API is refused by A at once on every path: submit,
 * poll, list, chat; an open long-poll on A ends with a 401. A rotation on B: A refuses the replaced
 * secret at once (no grace), or accepts it during its grace only; an expiry set on B holds on A.
 * Neither process ever writes a secret to its log. No wall-clock millisecond is asserted: a change
 * not seen by the other process would leave a request accepted that must be refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../helpers/admin.js';
import { fetchJson } from '../helpers/gateway-calls.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';

const unavailable = await postgresUnavailable();

describe.skipIf(unavailable !== undefined)(`two processes on one PostgreSQL database${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  let a: ServerProcess;
  let b: ServerProcess;
  const secrets: string[] = [ADMIN_KEY];

  const adminOnB = (method: string, path: string, body?: unknown) => fetchJson(`${b.url}/admin/v1${path}`, ADMIN_KEY, method, body);
  async function newKey(body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const r = await adminOnB('POST', '/keys', { name: 'cross-process', ...body });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    secrets.push(r.json.key as string);
    return { id: r.json.id as string, key: r.json.key as string };
  }
  const submitOnA = (key: string) => fetchJson(`${a.url}/v1/pic/images`, key, 'POST', { model: 'pic', prompt: 'x' });

  beforeAll(async () => {
    ensureBuilt();
    const url = await database.empty();
    const env = (name: string) => ({
      MEDIAGATE_DATABASE_URL: url,
      MEDIAGATE_DATA_DIR: tempDir(`mediagate-admin-${name}-`),
      MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
      MEDIAGATE_RATE_LIMIT: 'off',
      MEDIAGATE_LOG_LEVEL: 'debug',
      MEDIAGATE_SIGNING_SECRET: 'admin-processes-secret-0123456789abcdef',
    });
    [a, b] = await Promise.all([startServerProcess(env('a'), ['--role', 'api']), startServerProcess(env('b'), ['--role', 'api'])]);
  }, 120_000);
  afterAll(async () => {
    for (const p of [a, b]) {
      if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
      await p?.exited;
    }
  });

  it("a key revoked on B is refused by A at once on every path, and A's open long-poll ends with 401", async () => {
    const k = await newKey();
    const created = await submitOnA(k.key);
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    for (let i = 0; i < 3; i++) expect((await fetchJson(`${a.url}/v1/result/${id}`, k.key)).status).toBe(200);
    expect((await fetchJson(`${a.url}/v1/tasks`, k.key)).status).toBe(200);
    const longPoll = fetchJson(`${a.url}/v1/result/${id}?wait=60`, k.key); // no worker: the task stays queued
    await new Promise((r) => setTimeout(r, 300));
    expect((await adminOnB('POST', `/keys/${k.id}/revoke`)).json.revoked).toBe(true);
    // the revocation is committed before its answer: every request A gets from now on refuses the key
    expect((await submitOnA(k.key)).json.error.code).toBe('invalid_api_key');
    expect((await fetchJson(`${a.url}/v1/result/${id}`, k.key)).json.error.code).toBe('invalid_api_key');
    expect((await fetchJson(`${a.url}/v1/tasks`, k.key)).status).toBe(401);
    const chat = await fetchJson(`${a.url}/v1/chat/completions`, k.key, 'POST', { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'x' }] });
    expect([chat.status, chat.json.code]).toEqual([401, '401']);
    const ended = await longPoll;
    expect([ended.status, ended.json.error?.code]).toEqual([401, 'invalid_api_key']);
  }, 120_000);

  it('rotation on B: A refuses the replaced secret at once without grace, accepts it during its grace only', async () => {
    const k = await newKey();
    expect((await submitOnA(k.key)).status).toBe(200);
    const first = (await adminOnB('POST', `/keys/${k.id}/rotate`, {})).json;
    secrets.push(first.key as string);
    expect((await submitOnA(k.key)).status).toBe(401);
    expect((await submitOnA(first.key as string)).status).toBe(200);
    const second = (await adminOnB('POST', `/keys/${k.id}/rotate`, { grace_seconds: 600 })).json;
    secrets.push(second.key as string);
    for (const key of [first.key as string, second.key as string]) expect((await submitOnA(key)).status).toBe(200);
    const third = (await adminOnB('POST', `/keys/${k.id}/rotate`, { grace_seconds: 1 })).json;
    secrets.push(third.key as string);
    // the second secret's grace ends a second after the rotation: then A refuses it (and still takes the others)
    const refused = await waitFor(
      async () => {
        const r = await submitOnA(second.key as string);
        return r.status === 401 ? r : undefined;
      },
      20_000,
      'process A to refuse the rotated-out secret',
    );
    expect(refused.json.error.message).toMatch(/rotated/);
    expect((await submitOnA(third.key as string)).status).toBe(200);
    expect((await submitOnA(first.key as string)).status).toBe(200); // its 600 s grace still runs
  }, 120_000);

  it('an expiry set on B holds on A: key_expired once it passes, on submits and polls', async () => {
    const k = await newKey();
    const id = (await submitOnA(k.key)).json.id as string;
    expect((await fetchJson(`${a.url}/v1/result/${id}`, k.key)).status).toBe(200);
    expect((await adminOnB('PATCH', `/keys/${k.id}`, { expires_at: Math.floor(Date.now() / 1000) + 2 })).status).toBe(200);
    const expired = await waitFor(
      async () => {
        const r = await fetchJson(`${a.url}/v1/result/${id}`, k.key);
        return r.status === 401 ? r : undefined;
      },
      20_000,
      'process A to refuse the expired key',
    );
    expect(expired.json.error.code).toBe('key_expired');
    expect((await submitOnA(k.key)).json.error.code).toBe('key_expired');
  }, 120_000);

  it("no secret ever reaches either process's log", () => {
    for (const p of [a, b]) {
      const log = p.output();
      expect(log.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(log).not.toContain(secret);
    }
  });
});
