import fs from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../../../src/auth/keys.js';
import { loadConfig } from '../../../src/config.js';
import { createGateway, type Gateway } from '../../../src/main/gateway.js';
import type { Provider } from '../../../src/providers/types.js';
import { ResourceMonitor } from '../../../src/resources.js';
import { MAX_SERVER_FAULTS } from '../../../src/tasks/backoff.js';
import { tempDir } from '../../helpers/temp-root.js';
import { waitFor } from '../../helpers/wait-for.js';
import { within } from '../../helpers/within.js';
import { openMemoryStore } from '../../helpers/migrated-store.js';

// Issue 12, item 3: the gateway's own faults (disk full, descriptors exhausted) are not the task's
// attempts; /readyz reports them; connections are capped and silent ones closed (G84).
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gateway(env: Record<string, string>, options: Parameters<typeof createGateway>[1] = {}): Promise<Gateway & { key: string }> {
  const dataDir = tempDir();
  const config = loadConfig({
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_LOG_LEVEL: 'silent',
    MEDIAGATE_RATE_LIMIT: 'off',
    MEDIAGATE_SANDBOX_TIMING: 'instant',
    MEDIAGATE_SIGNING_SECRET: 's'.repeat(40),
    MEDIAGATE_MIN_FREE_DISK_MB: '0',
    ...env,
  });
  const gw = await createGateway(config, { store: openMemoryStore(), runnerPollMs: 20, ...options });
  cleanups.push(async () => {
    await gw.close(500);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return Object.assign(gw, { key: (await createApiKey(gw.store.keys, 'k')).secret });
}

/** A provider whose every attempt fails as a full disk would. */
function diskFullProvider(calls: { n: number }): Provider {
  return {
    id: 'sandbox',
    capabilities: { families: ['pic'] },
    async start() {
      calls.n++;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
}

const submit = (gw: Gateway & { key: string }) =>
  gw.app.inject({ method: 'POST', url: '/v1/pic/images', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'pic', prompt: 'x' } });

describe("the gateway's own faults are not the task's attempts", () => {
  it('a full disk sends the task back to the queue with its attempt given back and the fault counted', async () => {
    const calls = { n: 0 };
    const gw = await gateway({ MEDIAGATE_MAX_ATTEMPTS: '1' }, { providers: [diskFullProvider(calls)] });
    gw.startBackground();
    const id = (await submit(gw)).json().id as string;
    const back = await waitFor(
      async () => {
        const t = await gw.store.tasks.get(id);
        return t && t.serverFaults >= 1 && t.status === 'queued' ? t : undefined;
      },
      10_000,
      'the task back in the queue',
    );
    // one attempt allowed: were it counted, the task would have failed
    expect(back).toMatchObject({ status: 'queued', attempts: 0, serverFaults: 1, error: null });
    expect(back.runAfter).toBeGreaterThan(Date.now()); // after a pause
    expect(calls.n).toBe(1);
  });

  it("after the last allowed fault the task fails, saying it was the gateway's fault", async () => {
    const calls = { n: 0 };
    const gw = await gateway({}, { providers: [diskFullProvider(calls)] });
    const id = (await submit(gw)).json().id as string;
    await gw.store.tasks.updateIf(id, { statusIn: ['queued'] }, { serverFaults: MAX_SERVER_FAULTS });
    gw.startBackground();
    const failed = await waitFor(
      async () => {
        const t = await gw.store.tasks.get(id);
        return t?.status === 'failed' ? t : undefined;
      },
      10_000,
      'the task to fail',
    );
    expect(failed.error).toMatch(/short of a resource of its own \(ENOSPC\).*nothing in the request caused it/);
    expect(failed.attempts).toBe(1);
  });

  it('the faults count in a row: an attempt that ran in between (and failed for its own reason) starts the count again', async () => {
    const calls = { n: 0 };
    const provider: Provider = {
      id: 'sandbox',
      capabilities: { families: ['pic'] },
      async start() {
        calls.n++;
        if (calls.n === 1) throw new Error('the model crashed'); // an ordinary failed attempt, retried
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    };
    const gw = await gateway({}, { providers: [provider] });
    const id = (await submit(gw)).json().id as string;
    await gw.store.tasks.updateIf(id, { statusIn: ['queued'] }, { serverFaults: MAX_SERVER_FAULTS });
    gw.startBackground();
    const back = await waitFor(
      async () => {
        const t = await gw.store.tasks.get(id);
        return calls.n === 2 && t?.status !== 'processing' ? t : undefined;
      },
      10_000,
      'the fault after the failed attempt',
    );
    expect(back, back.error ?? '').toMatchObject({ status: 'queued', attempts: 1, serverFaults: 1, error: null });
  });
});

describe('resources short', () => {
  it('/readyz answers 503 naming what is short, and the worker claims nothing meanwhile', async () => {
    let free = 100 * 1_048_576;
    let asked = 0; // each worker fill and each /readyz asks (the monitor caches nothing here)
    const monitor = new ResourceMonitor(
      '/data',
      512 * 1_048_576,
      {
        freeDiskBytes: () => {
          asked++;
          return free;
        },
        openFiles: () => ({ open: 10, limit: 1024 }),
      },
      0,
    );
    const gw = await gateway({}, { resources: monitor });
    gw.startBackground();
    const ready = await gw.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().error).toMatchObject({
      code: 'service_unavailable',
      message: expect.stringMatching(/disk: 100 MiB free .* MEDIAGATE_MIN_FREE_DISK_MB \(512 MiB\)/),
    });
    const id = (await submit(gw)).json().id as string;
    const before = asked;
    await waitFor(() => (asked >= before + 10 ? true : undefined), 10_000, 'ten worker polls with the task queued');
    expect(await gw.store.tasks.get(id)).toMatchObject({ status: 'queued', attempts: 0 });
    free = 10_000 * 1_048_576;
    expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await waitFor(async () => ((await gw.store.tasks.get(id))?.status === 'completed' ? true : undefined), 10_000, 'the task to run once the disk has room');
  });

  it('descriptors near their limit count as short too', () => {
    const monitor = new ResourceMonitor('/data', 0, { freeDiskBytes: () => 0, openFiles: () => ({ open: 930, limit: 1024 }) }, 0);
    expect(monitor.check()).toEqual({ ok: false, problems: [expect.stringMatching(/file descriptors: 930 open of a limit of 1024/)] });
  });
});

describe('connections', () => {
  it('beyond MEDIAGATE_MAX_CONNECTIONS a new connection is closed at once; the open ones keep working', async () => {
    const gw = await gateway({ MEDIAGATE_WORKERS: '0', MEDIAGATE_MAX_CONNECTIONS: '2' });
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const open = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    // both accepted by the server before the third connects
    const accepted = (): Promise<number> => new Promise((resolve, reject) => gw.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await waitFor(async () => ((await accepted()) === 2 ? true : undefined), 10_000, 'the two connections to be accepted');
    const third = net.connect(port, '127.0.0.1');
    await within(new Promise((resolve) => third.on('close', resolve)), 10_000, 'the third connection to be closed');
    const answer = await new Promise<string>((resolve) => {
      open[0]!.once('data', (d) => resolve(String(d)));
      open[0]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    for (const s of open) s.destroy();
  });

  it('a connection that sends no request headers is closed after MEDIAGATE_HEADERS_TIMEOUT_SECONDS', async () => {
    const gw = await gateway({ MEDIAGATE_WORKERS: '0', MEDIAGATE_HEADERS_TIMEOUT_SECONDS: '1' });
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const silent = net.connect(Number(new URL(address).port), '127.0.0.1');
    let received = '';
    silent.on('data', (d) => {
      received += String(d);
    });
    const opened = Date.now();
    await within(new Promise((resolve) => silent.on('close', resolve)), 10_000, 'the silent connection to be closed');
    expect(Date.now() - opened).toBeGreaterThanOrEqual(900); // not before the timeout (causal lower bound)
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    // the message names the bound this gateway applies, not a default of another setting
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('request_timeout');
    expect(body.error.message).toMatch(/\(headers within 1 s, the whole request within 120 s\)/);
  });
});
