/**
 * Webhooks across kill -9 (G210, G211) with real `mediagate serve` processes on one data directory:
 * every finished task's delivery arrives after the restart, under the same webhook-id and with the
 * same bytes as before the crash; and `keys webhook` sets and clears a key's default URL.
 */
import fs from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson } from '../helpers/gateway-calls.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { ensureBuilt, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { startScriptedReceiver, type ScriptedReceiver } from '../helpers/scripted-receiver.js';

const BOOTSTRAP = 'bootstrap-key-for-webhook-crash-01';
let dataDir: string;
let receiver: ScriptedReceiver;
const procs: ServerProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir();
  receiver = await startScriptedReceiver();
}, 200_000);
afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const env = () => ({
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_BOOTSTRAP_KEY: BOOTSTRAP,
  MEDIAGATE_SANDBOX_TIMING: 'fast',
  MEDIAGATE_LEASE_SECONDS: '2',
  MEDIAGATE_LOG_LEVEL: 'info',
  MEDIAGATE_RATE_LIMIT: 'off',
  MEDIAGATE_ALLOW_PRIVATE_URLS: '1',
  MEDIAGATE_WEBHOOK_TIMEOUT_SECONDS: '1',
  MEDIAGATE_WEBHOOK_RETRY_SECONDS: '1',
});

const call = (url: string, method = 'GET', payload?: unknown) => fetchJson(url, BOOTSTRAP, method, payload);

describe('webhooks across kill -9', () => {
  it('deliveries queued before the crash arrive after the restart, same webhook-id, same bytes, signed', async () => {
    receiver.script = [500, 500, 500];
    const first = await startServerProcess(env());
    procs.push(first);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await call(`${first.url}/v1/pic/images`, 'POST', { model: 'pic', prompt: `crash ${i}`, callback_url: `${receiver.origin}/hook` });
      expect(r.status).toBe(200);
      ids.push(r.json.id);
    }
    await waitFor(() => (receiver.received.length > 0 ? true : undefined), 30_000, 'a first delivery attempt');
    first.child.kill('SIGKILL');
    await first.exited;
    const beforeCrash = receiver.received.length;
    receiver.script = [];

    const second = await startServerProcess(env());
    procs.push(second);
    const { key: secret } = (await call(`${second.url}/v1/webhooks/secret`)).json;
    for (const id of ids) {
      await waitFor(
        async () => {
          const [d] = (await call(`${second.url}/v1/tasks/${id}/deliveries`)).json.data;
          return d?.status === 'delivered' ? d : undefined;
        },
        60_000,
        `the delivery of ${id}`,
      );
    }
    expect(receiver.received.length).toBeGreaterThan(beforeCrash);
    const byId = new Map<string, string[]>();
    for (const r of receiver.received) {
      const id = String(r.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), r.body]);
      expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toBeTruthy();
    }
    expect([...byId.keys()].sort()).toEqual(ids.map((id) => `msg_${id}`).sort()); // every task's, and nothing else
    for (const [id, bodies] of byId) {
      expect(new Set(bodies).size, id).toBe(1); // retries (across the crash too) send the same bytes
      expect(JSON.parse(bodies[0]!)).toMatchObject({ id: id.slice(4), status: 'completed' });
    }
    // the receiver answered 500 three times: those attempts are on record unless the crash came first
    const attempts = await Promise.all(ids.map(async (id) => (await call(`${second.url}/v1/tasks/${id}/deliveries`)).json.data[0].attempts));
    for (const list of attempts) expect(list.at(-1).status_code).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);

  it('keys webhook sets (by the caller-URL rule), lists and clears a key default URL', () => {
    const listed = runCli(['keys', 'list'], { MEDIAGATE_DATA_DIR: dataDir });
    const id = /^(key_[0-9a-f]+)\t/m.exec(listed.stdout)![1]!;
    expect(listed.stdout).toContain('webhook none');
    const refused = runCli(['keys', 'webhook', id, 'http://127.0.0.1:9/x'], { MEDIAGATE_DATA_DIR: dataDir });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^URL: names a loopback address/m);
    // the operator is told which setting allows it, and that the command's own environment counts (G485)
    expect(refused.stderr).toContain('this command checks addresses itself: MEDIAGATE_ALLOW_PRIVATE_URLS=1 in its environment allows private ones');
    // --url names the gateway (G314): the old form is a usage error, never a request to the webhook's host
    const old = runCli(['keys', 'webhook', id, '--url', 'https://hooks.example.com/x'], {
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_ADMIN_KEY: 'admin-key-0123456789abcdef',
    });
    expect([old.status, old.stderr]).toEqual([2, expect.stringMatching(/webhook URL \(or none\) as arguments; --url names the gateway/)]);
    const set = runCli(['keys', 'webhook', id, 'https://hooks.example.com/x'], { MEDIAGATE_DATA_DIR: dataDir });
    expect(set.status, set.stderr).toBe(0);
    expect(runCli(['keys', 'list'], { MEDIAGATE_DATA_DIR: dataDir }).stdout).toContain('webhook https://hooks.example.com/x');
    expect(runCli(['keys', 'webhook', id, 'none'], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(0);
    expect(runCli(['keys', 'list'], { MEDIAGATE_DATA_DIR: dataDir }).stdout).toContain('webhook none');
    expect(runCli(['keys', 'webhook', 'key_nope', 'none'], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(1);
  }, 120_000); // seven commands, each a process start
});
