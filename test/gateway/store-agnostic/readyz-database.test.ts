/**
 * `/readyz` when the database stops answering (G250): a PostgreSQL host that takes the connection
 * and then says nothing (packets dropped, a hung server) makes `/readyz` a 503 naming the store
 * within its ping bound, instead of a request left waiting for the system's TCP timeout; a store
 * whose ping fails is a 503 at once. The gateway is the real one (createGateway) on an in-memory
 * store whose ping goes to that host through the store's own pool settings.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createGateway, type Gateway } from '../../../src/main/gateway.js';
import { CONNECT_TIMEOUT_MS, createPool } from '../../../src/store/postgres/connect.js';
import { tempDir } from '../../helpers/temp-root.js';
import { openMemoryStore } from '../../helpers/migrated-store.js';

let silentHost: net.Server;
const held: net.Socket[] = [];
beforeAll(async () => {
  // accepts connections, reads what comes, never answers
  silentHost = net.createServer((socket) => {
    held.push(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => silentHost.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((resolve) => silentHost.close(resolve));
});

async function gatewayWithPing(ping: () => Promise<void>, storePingMs?: number): Promise<Gateway> {
  const store = openMemoryStore();
  store.ping = ping;
  return createGateway(loadConfig({ MEDIAGATE_DATA_DIR: tempDir(), MEDIAGATE_LOG_LEVEL: 'silent', MEDIAGATE_WORKERS: '0', MEDIAGATE_MIN_FREE_DISK_MB: '0' }), {
    store,
    ...(storePingMs !== undefined && { storePingMs }),
  });
}

describe('/readyz and the database', () => {
  it('a database host that never answers: 503 naming the store once the ping bound passed', async () => {
    const port = (silentHost.address() as net.AddressInfo).port;
    // a pool with no bound of its own: only the route's bound can answer this request
    const pool = new pg.Pool({ connectionString: `postgres://mediagate@127.0.0.1:${port}/mediagate` });
    pool.on('error', () => undefined);
    let answered = false;
    // the route's bound, shortened through its option (G277): the default (STORE_PING_MS, 3 s) is the
    // same mechanism, waited out for nothing
    const gateway = await gatewayWithPing(async () => {
      await pool.query('SELECT 1');
      answered = true;
    }, 500);
    try {
      const res = await gateway.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toBe('The task store is not reachable');
      expect(answered).toBe(false);
      expect(held.length).toBeGreaterThan(0); // the pool did reach the host: the ping was waiting for its answer
      expect((await gateway.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await gateway.close(0);
      for (const s of held) s.destroy(); // the pending connection fails now, not at its 10 s bound
      await pool.end().catch(() => undefined);
    }
  }, 20_000);

  // The bound is the store's own mechanism with a shorter time (G288): the default, CONNECT_TIMEOUT_MS
  // (10 s), would make this test wait 20 s for the same two failures.
  it(`the store's pool gives up a connection the host never completes (after its connect bound, ${CONNECT_TIMEOUT_MS / 1000} s by default), and a pool wait is not bounded by it`, async () => {
    const port = (silentHost.address() as net.AddressInfo).port;
    const pool = createPool({ url: `postgres://mediagate@127.0.0.1:${port}/mediagate`, poolSize: 1, connectTimeoutMs: 500 }, 'readyz-test');
    pool.on('error', () => undefined);
    try {
      const first = pool.query('SELECT 1');
      const second = pool.query('SELECT 2'); // waits for the pool's one connection
      await expect(first).rejects.toThrow(/^timeout expired$/);
      // the waiting query was handed a connection attempt of its own once the first failed (the
      // client's "timeout expired"), never failed by a bound on its wait in the pool's queue (that
      // would be pg-pool's "timeout exceeded when trying to connect")
      await expect(second).rejects.toThrow(/^timeout expired$/);
      expect(held.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const s of held) s.destroy();
      await pool.end().catch(() => undefined);
    }
  }, 30_000);

  it('a store whose ping fails: 503 at once; a store that answers: 200', async () => {
    const failing = await gatewayWithPing(() => Promise.reject(new Error('connection refused')));
    try {
      const res = await failing.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.body).not.toContain('connection refused');
    } finally {
      await failing.close(0);
    }
    const healthy = await gatewayWithPing(() => Promise.resolve());
    try {
      expect((await healthy.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await healthy.close(0);
    }
  });
});
