import path from 'node:path';
import fs from 'node:fs';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson } from '../helpers/gateway-calls.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { ensureBuilt, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';

const BOOTSTRAP = 'bootstrap-key-for-crash-test-0001';
let dataDir: string;
const procs: ServerProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir();
}, 200_000);
afterAll(() => {
  for (const p of procs) p.child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const env = () => ({
  MEDIAGATE_DATA_DIR: dataDir,
  MEDIAGATE_BOOTSTRAP_KEY: BOOTSTRAP,
  MEDIAGATE_SANDBOX_TIMING: 'fast',
  MEDIAGATE_LEASE_SECONDS: '2',
  MEDIAGATE_WORKER_CONCURRENCY: '2',
  MEDIAGATE_LOG_LEVEL: 'info',
  MEDIAGATE_RATE_LIMIT: 'off',
});

const call = fetchJson;

describe('the mediagate command', () => {
  it('keys create prints the key alone on its last line; list never shows it; revoke stops it at once', async () => {
    const created = runCli(['keys', 'create', '--name', 'cli-test'], { MEDIAGATE_DATA_DIR: dataDir });
    expect(created.status).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const key = lines[lines.length - 1]!;
    expect(key).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
    const listed = runCli(['keys', 'list'], { MEDIAGATE_DATA_DIR: dataDir });
    expect(listed.stdout).toContain('cli-test');
    expect(listed.stdout).not.toContain(key);
    expect(fs.readFileSync(`${dataDir}/mediagate.db`).includes(Buffer.from(key))).toBe(false);

    const server = await startServerProcess(env());
    procs.push(server);
    expect((await call(`${server.url}/v1/pic/images`, key, 'POST', { model: 'pic', prompt: 'x' })).status).toBe(200);
    const id = /^(key_[0-9a-f]+)\t.*cli-test/m.exec(listed.stdout)![1]!;
    const limited = runCli(['keys', 'limit', id, '--submits', '25'], { MEDIAGATE_DATA_DIR: dataDir });
    expect(limited.stdout).toContain(`${id}: submits 25/s, queries default/s`);
    expect(runCli(['keys', 'limit', id, '--queries', 'lots'], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(2);
    expect(runCli(['keys', 'revoke', id], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(0);
    expect((await call(`${server.url}/v1/pic/images`, key, 'POST', { model: 'pic', prompt: 'x' })).status).toBe(401);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).not.toContain(key);
    expect(server.output()).not.toContain(BOOTSTRAP);
  }, 120_000);

  it('a bad setting stops the start with a message naming it', () => {
    const r = runCli(['serve'], { MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_SANDBOX_TIMING: 'sometimes' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/invalid setting MEDIAGATE_SANDBOX_TIMING: must be instant, fast or realistic/);
  });
});

describe('crash safety', () => {
  it('every accepted task completes across kill -9 and a restart; none is run twice to completion', async () => {
    const first = await startServerProcess(env());
    procs.push(first);
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const r = await call(`${first.url}/v1/pic/images`, BOOTSTRAP, 'POST', { model: 'pic', prompt: `crash ${i}`, size: '16:9' });
      expect(r.status).toBe(200);
      ids.push(r.json.id);
    }
    await waitFor(
      async () => ((await call(`${first.url}/v1/result/${ids[0]}`, BOOTSTRAP)).json.status !== 'queued' ? true : undefined),
      10_000,
      'work to start',
    );
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startServerProcess(env());
    procs.push(second);
    const finals = await waitFor(
      async () => {
        const all = await Promise.all(ids.map(async (id) => (await call(`${second.url}/v1/result/${id}`, BOOTSTRAP)).json));
        return all.every((t) => t.status === 'completed' || t.status === 'failed') ? all : undefined;
      },
      60_000,
      'all tasks to finish after the restart',
    );
    expect(finals.map((t) => t.status)).toEqual(ids.map(() => 'completed'));
    for (const t of finals) expect((await fetch(t.image_url.replace(/^http:\/\/localhost:\d+/, second.url))).status).toBe(200);
    const completedLogs = (first.output() + second.output()).split('\n').filter((l) => l.includes('"task completed"'));
    const completedIds = completedLogs.map((l) => /"taskId":"([^"]+)"/.exec(l)?.[1]);
    expect(new Set(completedIds).size).toBe(completedIds.length);

    // an online backup while the server runs holds every task
    const copy = path.join(dataDir, 'backup-copy.db');
    expect(runCli(['backup', copy], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(0);
    const restored = openSqliteStore(copy);
    expect((await Promise.all(ids.map((id) => restored.tasks.get(id)))).every((t) => t?.status === 'completed')).toBe(true);
    await restored.close();
    expect(runCli(['backup', copy], { MEDIAGATE_DATA_DIR: dataDir }).status).toBe(2); // never overwrites

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);
});
