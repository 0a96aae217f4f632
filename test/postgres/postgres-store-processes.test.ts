/**
 * The PostgreSQL store shared by several processes: each store instance below has its own pool and
 * LISTEN connection, as a separate gateway process would. Claims never overlap, every instance
 * hears the others' task writes (and not its own twice), workers hear of new work and cancels, a periodic job runs in one process at a time, migrations run
 * once when processes start together, and a lost LISTEN connection comes back.
 */
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { MINUTE, T, newTask } from '../cases/store-contract-helpers.js';
import { countTasksByStatus, insertTask, insertTasks } from '../helpers/task-rows.js';

const unavailable = await postgresUnavailable();

/** Resolves with the first value `subscribe`'s listener is called with that satisfies `match`. */
function nextEvent<V>(subscribe: (listener: (v: V) => void) => () => void, match: (v: V) => boolean): Promise<V> {
  return new Promise((resolve) => {
    const stop = subscribe((v) => {
      if (!match(v)) return;
      stop();
      resolve(v);
    });
  });
}

describe.skipIf(unavailable !== undefined)(`PostgreSQL store across processes${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  const opened: PostgresStore[] = [];
  const open = async (url: string): Promise<PostgresStore> => {
    const store = await openPostgresStore({ url, poolSize: 8 });
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it('a database that cannot be reached is an error naming the URL without its password', async () => {
    const failure = openPostgresStore({ url: 'postgres://mediagate:s3cr3t-pw@127.0.0.1:1/mediagate' });
    await expect(failure).rejects.toThrow(/^could not open the PostgreSQL store at postgres:\/\/mediagate:\*\*\*@127\.0\.0\.1:1\/mediagate: /);
    await expect(failure).rejects.not.toThrow(/s3cr3t/);
  });

  it('a usage row recorded without waiting for it is seen by the next read through the same store', async () => {
    const url = await database.empty();
    const store = await open(url);
    await Promise.all([1, 2, 3, 4, 5].map(() => store.ping())); // connections ready: the read below is not held up by a connect
    // another session holds the table in SHARE mode: inserts wait for it, reads do not
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE chat_usage IN SHARE MODE');
      const writes = [0, 1, 2].map((i) =>
        store.usage.recordChatUsage({ keyId: 'key_u', model: 'chat-2.5-pro', requestId: `r${i}`, promptTokens: 2, completionTokens: 3, createdAt: T }),
      );
      await vi.waitFor(
        async () => {
          const { rows } = await admin.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM pg_locks WHERE relation = 'chat_usage'::regclass AND NOT granted`);
          expect(rows[0]!.n).toBe(3);
        },
        { timeout: 10_000, interval: 20 },
      );
      // a read made now must include the three rows: it cannot answer while they are still held up
      const read = store.usage.chatUsageByKey('key_u');
      const early = await Promise.race([
        read.then(() => 'answered'),
        new Promise((r) => {
          setTimeout(r, 500, 'waiting');
        }),
      ]);
      await admin.query('COMMIT');
      expect(early).toBe('waiting');
      expect(await read).toEqual([{ model: 'chat-2.5-pro', requests: 3, promptTokens: 6, completionTokens: 9 }]);
      await Promise.all(writes);
    } finally {
      await admin.end();
    }
  });

  it('migrations run once when several processes start together on an empty database', async () => {
    const url = await database.empty();
    const stores = await Promise.all([1, 2, 3, 4].map(() => open(url)));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    } finally {
      await client.end();
    }
    for (const s of stores) expect(await countTasksByStatus(s.tasks)).toMatchObject({ queued: 0 });
  });

  it('two instances claiming from one database at once never claim the same task, and together claim all', async () => {
    const url = await database.empty();
    const [a, b] = [await open(url), await open(url)];
    const ids = (
      await insertTasks(
        a.tasks,
        Array.from({ length: 120 }, (_, i) => newTask({ ownerKeyId: `key_${i % 3}`, createdAt: T + i })),
      )
    ).map((t) => t.id);
    const claimed: Array<{ store: string; id: string }> = [];
    const worker = async (store: PostgresStore, name: string): Promise<void> => {
      for (;;) {
        const task = await store.tasks.claimNext(['sandbox'], `${name}-worker`, T + 1000, T + MINUTE);
        if (!task) return;
        claimed.push({ store: name, id: task.id });
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].flatMap((i) => [worker(a, `a${i}`), worker(b, `b${i}`)]));
    expect(claimed.map((c) => c.id).sort()).toEqual([...ids].sort()); // each exactly once
    expect(new Set(claimed.map((c) => c.store[0])).size).toBe(2); // both instances took part
    expect(await countTasksByStatus(a.tasks)).toMatchObject({ queued: 0, processing: 120 });
  });

  it("an instance's watchers hear the other's task writes once committed, and their own writes once (no echo)", async () => {
    const url = await database.empty();
    const [a, b] = [await open(url), await open(url)];
    const heardByA: string[] = [];
    a.tasks.watchChanges((id) => heardByA.push(id));
    const inB = nextEvent<string>(
      (l) => b.tasks.watchChanges(l),
      () => true,
    );
    const x = await insertTask(a.tasks, newTask());
    expect(await inB).toBe(x.id);
    expect((await b.tasks.get(x.id))?.status).toBe('queued'); // announced after the commit: readable
    // A's echo of x would come before B's write y (notifications arrive in commit order)
    const yHeard = nextEvent<string>(
      (l) => a.tasks.watchChanges(l),
      (id) => id !== x.id,
    );
    const y = await insertTask(b.tasks, newTask());
    expect(await yHeard).toBe(y.id);
    expect(heardByA).toEqual([x.id, y.id]);
    // a status change and a delete are heard too
    const cancelHeard = nextEvent<string>(
      (l) => b.tasks.watchChanges(l),
      (id) => id === x.id,
    );
    await a.tasks.updateIf(x.id, { statusIn: ['queued'] }, { status: 'cancelled' });
    await cancelHeard;
    expect((await b.tasks.get(x.id))?.status).toBe('cancelled');
    const deleteHeard = nextEvent<string>(
      (l) => a.tasks.watchChanges(l),
      (id) => id === y.id,
    );
    await b.tasks.delete(y.id);
    await deleteHeard;
  });

  it("a worker hears of work another process queued or scheduled: the task's provider", async () => {
    const url = await database.empty();
    const [api, worker] = [await open(url), await open(url)];
    const queued = nextEvent<string>(
      (l) => worker.tasks.watchQueue(l),
      () => true,
    );
    const t = await insertTask(api.tasks, newTask({ provider: 'prov_q' }));
    expect(await queued).toBe('prov_q');
    // claimed (leased): nothing to announce; back to waiting for its check: announced again
    await worker.tasks.claimNext(['prov_q'], 'w1', T, T + MINUTE);
    const scheduled = nextEvent<string>(
      (l) => worker.tasks.watchQueue(l),
      () => true,
    );
    await api.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1' }, { leaseOwner: null, leaseExpiresAt: null, runAfter: T + 10 });
    expect(await scheduled).toBe('prov_q');
  });

  it('a cancel by one process is heard by every instance, once per cancel', async () => {
    const url = await database.empty();
    const [api, worker] = [await open(url), await open(url)];
    const cancels: string[] = [];
    worker.tasks.watchCancels((id) => cancels.push(id));
    const [t, other] = [await insertTask(api.tasks, newTask()), await insertTask(api.tasks, newTask())];
    await worker.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
    const heard = nextEvent<string>(
      (l) => worker.tasks.watchCancels(l),
      () => true,
    );
    await api.tasks.updateIf(t.id, { statusIn: ['queued', 'processing'] }, { status: 'cancelled', leaseOwner: null, leaseExpiresAt: null, finishedAt: T + 1 });
    expect(await heard).toBe(t.id);
    // a later write to the cancelled task is no second cancel; the next cancel is heard after it
    await api.tasks.clearExpiry(t.id);
    const next = nextEvent<string>(
      (l) => worker.tasks.watchCancels(l),
      () => true,
    );
    await api.tasks.updateIf(other.id, { statusIn: ['queued', 'processing'] }, { status: 'cancelled', finishedAt: T + 2 });
    expect(await next).toBe(other.id);
    expect(cancels).toEqual([t.id, other.id]);
  });

  it('runAlone: a job runs in one process at a time; the others skip it while it runs, and run it after', async () => {
    const url = await database.empty();
    const [a, b] = [await open(url), await open(url)];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = a.runAlone!('sweep', async () => {
      entered();
      await gate;
    });
    await inside;
    const ran: string[] = [];
    expect(
      await b.runAlone!('sweep', async () => {
        ran.push('b sweep');
      }),
    ).toBe(false);
    expect(
      await a.runAlone!('sweep', async () => {
        ran.push('a sweep again');
      }),
    ).toBe(false); // also within the same process
    expect(
      await b.runAlone!('other job', async () => {
        ran.push('b other');
      }),
    ).toBe(true);
    release();
    expect(await first).toBe(true);
    expect(
      await b.runAlone!('sweep', async () => {
        ran.push('b sweep');
      }),
    ).toBe(true);
    expect(ran).toEqual(['b other', 'b sweep']);
    // a job that throws frees the job too
    await expect(
      a.runAlone!('sweep', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await b.runAlone!('sweep', async () => undefined)).toBe(true);
  });

  it('a lost LISTEN connection comes back: changedElsewhere says notifications may have been missed, and the next ones arrive', async () => {
    const url = await database.empty();
    const [a, b] = [await open(url), await open(url)];
    expect(b.tasks.changedElsewhere()).toBe(false);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // every LISTEN session of this database (a's and b's) is cut
      const { rowCount } = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
      expect(rowCount).toBe(2);
    } finally {
      await admin.end();
    }
    await vi.waitFor(() => expect(b.tasks.changedElsewhere()).toBe(true), { timeout: 10_000, interval: 50 });
    expect(b.tasks.changedElsewhere()).toBe(false); // once per loss
    const heard = nextEvent<string>(
      (l) => b.tasks.watchChanges(l),
      () => true,
    );
    const t = await insertTask(a.tasks, newTask());
    expect(await heard).toBe(t.id);
  });
});
