/**
 * `mediagate serve --role` (G163): an API process and a worker process on one data directory (one
 * SQLite file): the API process answers callers and runs nothing, the worker runs the tasks and
 * answers only its health, and each keeps its own scratch folder (neither empties the other's).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../src/auth/keys.js';
import { loadConfig } from '../../../src/config.js';
import { createGateway, type Gateway } from '../../../src/main/gateway.js';
import { tempDir } from '../../helpers/temp-root.js';
import { waitFor } from '../../helpers/wait-for.js';

const dataDir = tempDir('mediagate-roles-');
const env = (role: string) =>
  loadConfig({
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_ROLE: role,
    MEDIAGATE_SANDBOX_TIMING: 'instant',
    MEDIAGATE_LOG_LEVEL: 'silent',
    MEDIAGATE_RATE_LIMIT: 'off',
    MEDIAGATE_MIN_FREE_DISK_MB: '0',
    MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
  });
let api: Gateway;
let worker: Gateway;
let auth: Record<string, string>;

beforeAll(async () => {
  worker = await createGateway(env('worker'), { runnerPollMs: 50 });
  api = await createGateway(env('api'));
  auth = { authorization: `Bearer ${(await createApiKey(api.store.keys, 'alice')).secret}` };
});

afterAll(async () => {
  await api?.close(1000);
  await worker?.close(1000);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('roles on one data directory', () => {
  it('the API process runs no worker; the worker process answers only /healthz and /readyz', async () => {
    expect(api.runner).toBeUndefined();
    expect(worker.runner).toBeDefined();
    expect((await worker.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await worker.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    const refused = await worker.app.inject({ method: 'POST', url: '/v1/pic/images', headers: auth, payload: { model: 'pic', prompt: 'x' } });
    expect(refused.statusCode).toBe(404);
    expect((await worker.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(404);
  });

  it('each process has a scratch folder of its own; a start empties neither', async () => {
    expect(api.tmpDir).not.toBe(worker.tmpDir);
    expect(path.dirname(api.tmpDir)).toBe(path.join(dataDir, 'tmp'));
    expect(fs.existsSync(worker.tmpDir)).toBe(true); // the API process started after the worker
    const third = await createGateway(env('api'));
    expect(fs.existsSync(api.tmpDir) && fs.existsSync(worker.tmpDir)).toBe(true);
    await third.close(1000);
    expect(fs.existsSync(third.tmpDir)).toBe(false);
  });

  it('a task submitted to the API process is run by the worker process and served by the API process', async () => {
    const submitted = await api.app.inject({ method: 'POST', url: '/v1/pic/images', headers: auth, payload: { model: 'pic', prompt: 'a lighthouse' } });
    expect(submitted.statusCode, submitted.body).toBe(200);
    const id = submitted.json().id as string;
    expect((await api.store.tasks.get(id))?.status).toBe('queued'); // nothing runs it here
    worker.startBackground();
    const done = await waitFor(
      async () => {
        const t = await api.store.tasks.get(id);
        return t?.status === 'completed' ? t : undefined;
      },
      15_000,
      'the worker process to complete the task',
    );
    expect(done.leaseOwner).toBeNull();
    const reply = (await api.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: auth })).json();
    expect(reply.status).toBe('completed');
    const file = new URL(reply.image_url as string);
    const served = await api.app.inject({ method: 'GET', url: `${file.pathname}${file.search}` });
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.subarray(1, 4).toString()).toBe('PNG');
  });
});
