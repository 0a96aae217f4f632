import fs from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createGateway, type Gateway } from '../../src/main/gateway.js';
import { tempDir } from '../helpers/temp-root.js';
import { ensureBuilt, startServerProcess } from '../helpers/process.js';
import { openMemoryStore } from '../helpers/migrated-store.js';

// One access-log line per request (issue 11): method, route template, status, time, request id;
// never the key, never a signed URL's query.
const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    done();
  },
});
let gw: Gateway;
let dataDir: string;
let key: string;

beforeAll(async () => {
  dataDir = tempDir();
  const config = loadConfig({ MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_WORKERS: '0', MEDIAGATE_RATE_LIMIT: 'off', MEDIAGATE_SIGNING_SECRET: 's'.repeat(40) });
  gw = await createGateway(config, { store: openMemoryStore(), logger: createLogger('info', sink) });
  key = (await createApiKey(gw.store.keys, 'logged')).secret;
});
afterAll(async () => {
  await gw.close(1000);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('access log', () => {
  it('writes exactly one line per request with method, route, status, time and request id', async () => {
    lines.length = 0;
    const created = await gw.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-create' },
      payload: { model: 'pic', prompt: 'x' },
    });
    const id = created.json().id as string;
    await gw.app.inject({ method: 'GET', url: `/v1/result/${id}?wait=0`, headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-poll' } });
    await gw.app.inject({ method: 'GET', url: '/files/task_x/image.png?exp=1&sig=secret-signature', headers: { 'x-request-id': 'req-file' } });
    await gw.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'req-404' } });
    const access = lines.filter((l) => l.msg === 'request');
    expect(access.map((l) => [l.reqId, l.method, l.route, l.status])).toEqual([
      ['req-create', 'POST', '/v1/pic/images', 200],
      ['req-poll', 'GET', '/v1/result/:id', 200],
      ['req-file', 'GET', '/files/:taskId/:name', 403],
      ['req-404', 'GET', null, 404],
    ]);
    for (const l of access) expect(typeof l.ms).toBe('number');
    // nothing else is logged per request
    expect(lines.filter((l) => String(l.reqId ?? '').startsWith('req-'))).toHaveLength(4);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(key);
    expect(text).not.toContain('secret-signature');
  });
});

describe('access log of a running server (stdout, written asynchronously)', () => {
  it('every line reaches stdout, the last ones flushed when the process exits', async () => {
    ensureBuilt();
    const dir = tempDir();
    const bootstrap = 'access-log-test-key-0123456789';
    const server = await startServerProcess({ MEDIAGATE_DATA_DIR: dir, MEDIAGATE_BOOTSTRAP_KEY: bootstrap, MEDIAGATE_WORKERS: '0' });
    try {
      const ids = Array.from({ length: 20 }, (_, i) => `req-burst-${i}`);
      await Promise.all(
        ids.map((id) => fetch(`${server.url}/v1/result/task_missing`, { headers: { authorization: `Bearer ${bootstrap}`, 'x-request-id': id } })),
      );
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      const logged = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const access = logged.filter((l) => l.msg === 'request' && ids.includes(String(l.reqId)));
      expect(access.map((l) => l.reqId).sort()).toEqual([...ids].sort());
      for (const l of access) expect(l).toMatchObject({ method: 'GET', route: '/v1/result/:id', status: 404 });
      expect(server.output()).not.toContain(bootstrap);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
