/**
 * G451: a database host that keeps its connections open but stops answering (a partition, a hung
 * server; here a TCP proxy that stops forwarding) fails each statement after the pool's query
 * bound, as the database unreachable (503 with Retry-After for a request, a write again later for a
 * worker), instead of leaving requests waiting without end; the connection is dropped, and once
 * the host answers again the store works on with new ones. Migrations never have the bound.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isStoreUnavailable } from '../../src/store/faults.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';

const unavailable = await postgresUnavailable();
const database = postgresDatabase();

/** A TCP proxy to `target` that can stop forwarding (both ways, connections kept open) and start again. */
async function freezingProxy(target: URL): Promise<{ port: number; freeze(): void; thaw(): void; close(): void }> {
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const pairs: Array<[net.Socket, net.Socket]> = [];
  const forward = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk) => {
      if (!frozen) to.write(chunk); // while frozen the bytes are taken and never answered, as a hung host does
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: target.hostname, port: Number(target.port || 5432) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    forward(client, upstream);
    forward(upstream, client);
    pairs.push([client, upstream]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
    },
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe.skipIf(unavailable)('a database that stops answering on open connections (G451)', () => {
  const opened: PostgresStore[] = [];
  const proxies: Array<{ close(): void }> = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
    for (const p of proxies.splice(0)) p.close();
  });

  it('fails each statement after the bound as the database unreachable, then works on once it answers again', async () => {
    const url = new URL(await database.empty());
    const proxy = await freezingProxy(url);
    proxies.push(proxy);
    const through = new URL(url);
    through.host = `127.0.0.1:${proxy.port}`;
    const store = await openPostgresStore({ url: through.toString(), queryTimeoutMs: 300, connectTimeoutMs: 1_000, poolSize: 2 });
    opened.push(store);
    expect(await store.tasks.get('task_none')).toBeUndefined();

    proxy.freeze();
    // a plain read and a transaction both fail, classified as the store being unreachable (a 503, not a 500)
    const read = store.tasks.get('task_none');
    await expect(read).rejects.toThrow(/Query read timeout|timeout expired/);
    await read.catch((err: unknown) => expect(isStoreUnavailable(err)).toBe(true));
    const write = store.credits.grant('acct_none', 1, 'while frozen', Date.now());
    await write.then(
      () => expect.unreachable('a write while the database does not answer cannot succeed'),
      (err: unknown) => expect(isStoreUnavailable(err)).toBe(true),
    );

    proxy.thaw();
    // the connections that waited were dropped: new ones answer
    expect(await store.tasks.get('task_none')).toBeUndefined();
  });
});
