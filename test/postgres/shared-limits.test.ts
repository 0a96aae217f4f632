/**
 * Limits that hold across processes (G196-G198): two gateways, as two API processes run them (each
 * its own store, pool and listener), on one PostgreSQL database; and two gateways, each on its own
 * SQLite file, counting rate limits in one Redis. A key's rate budget, its in-flight bound and its
 * long-poll slots are each one budget across the processes, not one per process.
 */
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey, ensureApiKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/main/gateway.js';
import { cancelTask } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { postgresDatabase, postgresUnavailable, withClient } from '../helpers/postgres.js';
import { REDIS_URL, redisUnavailable } from '../helpers/redis.js';

const pgUnavailable = await postgresUnavailable();
const redisDown = await redisUnavailable();

const dirs: string[] = [];
const gateways: Gateway[] = [];
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close(1000)));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** An API-only gateway (no worker: submitted tasks stay queued, so in-flight counts stand still). */
async function apiGateway(env: Record<string, string>): Promise<Gateway> {
  const dir = tempDir();
  dirs.push(dir);
  const gateway = await createGateway(
    loadConfig({
      MEDIAGATE_DATA_DIR: dir,
      MEDIAGATE_WORKERS: '0',
      MEDIAGATE_LOG_LEVEL: 'silent',
      MEDIAGATE_RATE_LIMIT: 'on',
      MEDIAGATE_RATE_LIMIT_SUBMITS: '3',
      MEDIAGATE_RATE_LIMIT_QUERIES: '5',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '8',
      MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
      MEDIAGATE_MIN_FREE_DISK_MB: '0',
      ...env,
    }),
    { reviewMedia: false },
  );
  gateways.push(gateway);
  return gateway;
}

const submit = (g: Gateway, key: string) =>
  g.app.inject({ method: 'POST', url: '/v1/pic/images', headers: { authorization: `Bearer ${key}` }, payload: { model: 'pic', prompt: 'a fox' } });
const query = (g: Gateway, key: string, id: string, wait?: number) =>
  g.app.inject({ method: 'GET', url: `/v1/result/${id}${wait === undefined ? '' : `?wait=${wait}`}`, headers: { authorization: `Bearer ${key}` } });

/** Cancels a task through a gateway's store (pic has no cancel endpoint). */
async function cancel(g: Gateway, id: string): Promise<void> {
  expect(await cancelTask(g.store.tasks, (await g.store.tasks.get(id))!, null)).toMatchObject({ status: 'cancelled' });
}

/** Status codes of `n` requests made one after the other, alternating between the gateways. */
async function alternate(gs: Gateway[], n: number, request: (g: Gateway) => Promise<{ statusCode: number }>): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) codes.push((await request(gs[i % gs.length]!)).statusCode);
  return codes;
}

describe.skipIf(pgUnavailable !== undefined)(
  `gateways sharing PostgreSQL share each key's limits${pgUnavailable ? ` (skipped: ${pgUnavailable})` : ''}`,
  () => {
    const database = postgresDatabase();
    let a: Gateway;
    let b: Gateway;
    let databaseUrl: string;

    beforeAll(async () => {
      databaseUrl = await database.empty();
      a = await apiGateway({ MEDIAGATE_DATABASE_URL: databaseUrl });
      b = await apiGateway({ MEDIAGATE_DATABASE_URL: databaseUrl });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A key on the shared database; `unlimitedRates` lifts its rate limits for tests of the other bounds. */
    const newKey = async (name: string, unlimitedRates = false): Promise<string> => {
      const { secret, record } = await createApiKey(a.store.keys, name);
      if (unlimitedRates) await a.store.keys.setRateLimits(record.id, { submitRate: 100_000, queryRate: 100_000 });
      return secret;
    };

    it('the rate budget of a key is one across processes: rate plus burst in all, whichever process is asked', async () => {
      // the counts' windows are computed from the gateways' clock (the database only compares the
      // numbers), so a frozen clock keeps every request of the test in one window
      vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00Z') });
      const key = await newKey('shared-rates');
      const ids: string[] = [];
      const codes = await alternate([a, b], 8, async (g) => {
        const res = await submit(g, key);
        if (res.statusCode === 200) ids.push(res.json().id as string);
        return res;
      });
      expect(codes).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      expect(ids).toHaveLength(6);
      expect(await alternate([a, b], 12, (g) => query(g, key, ids[0]!))).toEqual([...Array(10).fill(200), 429, 429]);
      const limited = await submit(b, key);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error).toMatchObject({ code: 'rate_limited' });
    });

    it('the in-flight bound holds across processes: of 20 concurrent submits over both, exactly the bound is accepted', async () => {
      const key = await newKey('shared-in-flight', true);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(i % 2 === 0 ? a : b, key)));
      const accepted = results.filter((r) => r.statusCode === 200);
      expect(accepted).toHaveLength(8);
      for (const r of results.filter((x) => x.statusCode !== 200)) {
        expect(r.statusCode).toBe(429);
        expect(r.json().error).toMatchObject({ code: 'too_many_tasks_in_flight' });
      }
      // both processes accepted some only if each let its own through: the database decided
      const { rows } = await withClient(databaseUrl, (c) =>
        c.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM tasks t JOIN api_keys k ON k.id = t.owner_key_id
      WHERE k.name = 'shared-in-flight' AND t.status = 'queued'`),
      );
      expect(rows[0]!.n).toBe(8);
      // a cancel frees a place, on either process
      await cancel(b, accepted[0]!.json().id as string);
      expect((await submit(a, key)).statusCode).toBe(200);
      expect((await submit(b, key)).statusCode).toBe(429);
    });

    it('long-poll slots of a key are counted across processes: past the bound a query on another process answers at once', async () => {
      const key = await newKey('shared-long-polls', true);
      const id = (await submit(a, key)).json().id as string;
      let answered = 0;
      const waiting = Array.from({ length: 100 }, () =>
        query(a, key, id, 60).finally(() => {
          answered++;
        }),
      );
      await waitFor(async () => ((await slotsHeld(databaseUrl)) === 100 ? true : undefined), 20_000, 'the 100 long-polls to hold their slots');
      const over = await query(b, key, id, 60); // the 101st of the key: no slot left anywhere, so no wait
      expect(over.statusCode).toBe(200);
      expect(over.json()).toMatchObject({ id, status: 'queued' });
      expect(answered).toBe(0); // the others still wait: the answer above did not come from a change
      await cancel(b, id);
      const answers = await Promise.all(waiting);
      expect(answers.every((r) => r.statusCode === 200 && r.json().status === 'cancelled')).toBe(true);
      await waitFor(async () => ((await slotsHeld(databaseUrl)) === 0 ? true : undefined), 10_000, 'the slots to be released');
    });
  },
);

const slotsHeld = (url: string): Promise<number> =>
  withClient(url, async (c) => (await c.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM wait_slots')).rows[0]!.n);

describe.skipIf(redisDown !== undefined)(`gateways counting rate limits in one Redis${redisDown ? ` (skipped: ${redisDown})` : ''}`, () => {
  it("share each key's budget though each keeps its own SQLite store", async () => {
    const secret = `mg_shared-${Math.random().toString(36).slice(2)}${'x'.repeat(24)}`;
    const env = { MEDIAGATE_REDIS_URL: REDIS_URL, MEDIAGATE_BOOTSTRAP_KEY: secret };
    const gs = [await apiGateway(env), await apiGateway(env)];
    // Redis keeps the windows by its own clock: the 8 requests must fall in one 1 s window, which a
    // stalled machine could break; then the round is repeated (the precondition, not a time, is checked)
    for (let round = 0; ; round++) {
      const key = round === 0 ? secret : await createKeyOnBoth(gs, `round-${round}`);
      const started = Date.now();
      const codes = await alternate(gs, 8, async (g) => {
        const res = await submit(g, key);
        if (res.statusCode === 429) expect(res.json().error.code).toBe('rate_limited');
        return res;
      });
      if (Date.now() - started >= 900 && round < 3) continue;
      expect(codes).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      break;
    }
  });

  it('while Redis cannot be reached, requests are still answered, limited per process', async () => {
    const proxy = await tcpProxy(new URL(REDIS_URL));
    const secret = `mg_proxied-${Math.random().toString(36).slice(2)}${'x'.repeat(24)}`;
    const g = await apiGateway({
      MEDIAGATE_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      MEDIAGATE_BOOTSTRAP_KEY: secret,
      MEDIAGATE_RATE_LIMIT_QUERIES: '1000',
    });
    expect((await submit(g, secret)).statusCode).toBe(200);
    proxy.close(); // Redis is gone for this gateway
    const codes: number[] = [];
    for (let i = 0; i < 10; i++) codes.push((await submit(g, secret)).statusCode);
    expect(codes.every((c) => c === 200 || c === 429)).toBe(true); // never a 5xx
    expect(codes).toContain(429); // the in-memory count still limits the key
    expect(codes).toContain(200);
  });
});

/** The same key secret on every gateway's own store. */
async function createKeyOnBoth(gs: Gateway[], name: string): Promise<string> {
  const secret = `mg_${name}-${Math.random().toString(36).slice(2)}${'y'.repeat(24)}`;
  for (const g of gs) await ensureApiKey(g.store.keys, secret, name);
  return secret;
}

/** A TCP proxy to `target` whose close() also cuts every connection through it. */
async function tcpProxy(target: URL): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: target.hostname, port: Number(target.port || 6379) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
