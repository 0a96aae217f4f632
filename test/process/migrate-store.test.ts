/**
 * `mediagate migrate-store` (G187-G189): a SQLite installation filled by a real gateway (and, for
 * the states a sandbox run passes through too quickly, the store's own state changes), copied by
 * the CLI process into an empty PostgreSQL database with its local files into a bucket. The copy
 * must read back identically through the PostgreSQL store, keep the keys working, leave the task a
 * dead worker held recoverable, serve the old task ids from a gateway on PostgreSQL, and refuse a
 * second run.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { newTaskId, randomToken } from '../../src/ids.js';
import { createGateway } from '../../src/main/gateway.js';
import { FsBlobStore } from '../../src/media/fs-blob-store.js';
import { COPIED_TABLES, sqliteSelect, type CopiedTable } from '../../src/store/migrate/tables.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { AssetRecord, TaskRecord } from '../../src/store/types.js';
import { cancelTask, claimNextTask, failTask, saveUpstreamRef } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { waitFor } from '../helpers/wait-for.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, runCliAsync } from '../helpers/process.js';
import { startS3Server, useS3Credentials, type S3Server } from '../helpers/s3-server.js';
import { countTasksByStatus, insertTask } from '../helpers/task-rows.js';

const unavailable = await postgresUnavailable();

const BASE_ENV = {
  MEDIAGATE_SANDBOX_TIMING: 'instant',
  MEDIAGATE_LOG_LEVEL: 'silent',
  MEDIAGATE_RATE_LIMIT: 'off',
  MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
  MEDIAGATE_SIGNING_SECRET: 'test-secret-0123456789abcdefghijklmnop',
  MEDIAGATE_MIN_FREE_DISK_MB: '0',
  MEDIAGATE_ALLOW_PRIVATE_URLS: '1',
};

/** Every row of every copied table, read through `read`, sorted (the engines order rows differently). */
async function allRows(read: (t: CopiedTable) => Promise<unknown[][]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of COPIED_TABLES) out[t.name] = (await read(t)).map((r) => JSON.stringify(r)).sort();
  return out;
}

describe.skipIf(unavailable !== undefined)(`mediagate migrate-store${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();
  const dataDir = tempDir();
  let s3: S3Server;
  let url: string;
  let env: Record<string, string>;
  const secrets: Record<'alice' | 'bob' | 'carol', string> = { alice: '', bob: '', carol: '' };
  let tasks: Record<'completed' | 'idempotent' | 'queued' | 'processing' | 'checking' | 'failed' | 'cancelled', TaskRecord>;
  let asset: AssetRecord;

  beforeAll(async () => {
    ensureBuilt();
    useS3Credentials();
    s3 = await startS3Server();
    url = await database.empty();
    env = { ...BASE_ENV, MEDIAGATE_DATA_DIR: dataDir, ...s3.env() };

    // a gateway on the SQLite file of the data directory (results on its disk) makes two real tasks
    const sqliteEnv = { ...BASE_ENV, MEDIAGATE_DATA_DIR: dataDir };
    const gateway = await createGateway(loadConfig(sqliteEnv), { runnerPollMs: 50 });
    gateway.runner!.start();
    const keys = gateway.store.keys;
    for (const name of ['alice', 'bob', 'carol'] as const) secrets[name] = (await createApiKey(keys, name)).secret;
    const submit = async (headers: Record<string, string> = {}): Promise<string> => {
      const res = await gateway.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: { authorization: `Bearer ${secrets.alice}`, ...headers },
        payload: { model: 'pic', prompt: 'a fox' },
      });
      expect(res.statusCode).toBe(200);
      return res.json().id as string;
    };
    const ids = [await submit(), await submit({ 'idempotency-key': 'order-1' })];
    const done = await Promise.all(
      ids.map((id) =>
        waitFor(
          async () => {
            const t = await gateway.store.tasks.get(id);
            return t?.status === 'completed' ? t : undefined;
          },
          15_000,
          `task ${id} to complete`,
        ),
      ),
    );
    await gateway.close(1000);

    // the other states, through the store's own state changes
    const store = openSqliteStore(path.join(dataDir, 'mediagate.db'));
    const alice = (await store.keys.findActiveByHash(hashApiKey(secrets.alice)))!;
    const carol = (await store.keys.findActiveByHash(hashApiKey(secrets.carol)))!;
    await store.keys.setRateLimits(alice.id, { submitRate: 7, queryRate: 70 });
    await store.keys.revoke(carol.id, Date.now());
    await store.keys.setWebhookUrl(alice.id, 'https://hooks.example.com/alice');
    // the admin API's columns and tables (G300-G308): an allow-list and an expiry, its audit entry, a secret in its grace
    const now = Date.now();
    await store.keys.update(
      alice.id,
      { models: ['pic:*', 'chat:*'], expiresAt: now + 86_400_000, maxInFlight: 9 },
      { at: now, actor: 'cli', action: 'key.update', target: alice.id, requestId: null, details: { models: ['pic:*', 'chat:*'] } },
    );
    const bob = (await store.keys.findActiveByHash(hashApiKey(secrets.bob)))!;
    await store.keys.rotate(bob.id, { hash: hashApiKey('mg_bob-rotated-secret'), prefix: 'mg_bob-r' }, now + 86_400_000, now);
    await store.webhooks.secrets(alice.id, 'whsec_b2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xk');
    await store.webhooks.rotateSecret(alice.id, 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3', Date.now());
    const template = done[0]!;
    const add = async (callbackUrl?: string): Promise<TaskRecord> =>
      insertTask(store.tasks, {
        id: newTaskId(),
        ownerKeyId: alice.id,
        family: template.family,
        form: template.form,
        model: template.model,
        provider: template.provider,
        request: template.request,
        amount: template.amount,
        createdAt: Date.now(),
        ...(callbackUrl && { callbackUrl }),
      });
    const claim = async (now = Date.now()): Promise<TaskRecord> => (await claimNextTask(store.tasks, [template.provider], 'old-worker', 60_000, now))!;
    const later = Date.now() + 3_600_000;
    // a worker that died an hour ago: its lease has lapsed
    await add();
    const processing = await claim(Date.now() - 3_600_000);
    await add();
    const checking = (await saveUpstreamRef(
      store.tasks,
      await claim(),
      'old-worker',
      { generation: 0, provider: template.provider, ref: { id: 'up-42' }, startedAt: Date.now(), checkFailures: 0 },
      later,
    ))!;
    await add('https://hooks.example.com/failed'); // its failure queues a webhook delivery (G210)
    const failed = (await failTask(store.tasks, await claim(), 'old-worker', 'upstream said no', later))!;
    const cancelled = (await cancelTask(store.tasks, await add(), later))!;
    const queued = await add();
    tasks = { completed: done[0]!, idempotent: done[1]!, queued, processing, checking, failed, cancelled };
    expect(processing.status).toBe('processing');
    expect(checking).toMatchObject({ status: 'processing', leaseOwner: null });

    const assetId = `asset_${randomToken(16)}`;
    const bytes = await new FsBlobStore(path.join(dataDir, 'assets')).put(assetId, 'asset.png', {
      data: fs.readFileSync(path.join(dataDir, 'results', tasks.completed.id, tasks.completed.result!.files[0]!.name)),
    });
    asset = {
      id: assetId,
      ownerKeyId: alice.id,
      status: 'approved',
      reason: null,
      kind: 'image',
      format: 'png',
      width: 64,
      height: 48,
      duration: null,
      fps: null,
      bytes,
      file: 'asset.png',
      createdAt: Date.now(),
      expiresAt: later,
    };
    expect(await store.assets.insertWithinQuota(asset, 1_000_000_000, Date.now())).toBe(true);
    await store.usage.recordChatUsage({ keyId: alice.id, model: 'chat', requestId: 'req-1', promptTokens: 11, completionTokens: 22, createdAt: Date.now() });
    await store.usage.recordChatUsage({ keyId: alice.id, model: 'chat', requestId: 'req-2', promptTokens: 1, completionTokens: 2, createdAt: Date.now() });
    await store.close(); // writes the usage batch
  }, 120_000);

  afterAll(async () => {
    await s3?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies every table and file, and the copy reads back identically through the PostgreSQL store', async () => {
    const run = await runCliAsync(['migrate-store', '--to', url, '--files'], env);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain('tasks: 7 rows');
    expect(lines).toContain('api_keys: 3 rows');
    expect(lines.at(-1)).toMatch(
      /^migrated to postgres:\/\/.*counts verified: api_keys 3, api_key_grace 1, api_key_usage \d+, audit_log 1, accounts 3, ledger \d+, tasks 7, task_events \d+, webhook_deliveries 1, fair_keys 1, fair_clock 1, assets 1, idempotency_keys 1, chat_usage 2, usage_hourly \d+, usage_daily \d+, channel_states \d+, channel_minutes \d+$/,
    );

    // raw rows: the same in both databases, column by column
    const sqlite = new Database(path.join(dataDir, 'mediagate.db'), { readonly: true });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const expected = await allRows(async (t) => sqlite.prepare(sqliteSelect(t)).raw(true).all() as unknown[][]);
      const actual = await allRows(
        async (t) =>
          (
            await client.query({
              text: `SELECT ${t.columns.map((c) => c.name).join(', ')} FROM ${t.name}`,
              rowMode: 'array',
              types: { getTypeParser: ((oid: number) => (oid === 20 ? Number : pg.types.getTypeParser(oid))) as typeof pg.types.getTypeParser },
            })
          ).rows as unknown[][],
      );
      expect(actual).toEqual(expected);
      expect(expected.tasks).toHaveLength(7);
      const refs = await client.query<{ id: string; upstream_ref_id: string | null }>(
        'SELECT id, upstream_ref_id FROM tasks WHERE upstream_ref_id IS NOT NULL',
      );
      expect(refs.rows).toEqual([{ id: tasks.checking.id, upstream_ref_id: 'up-42' }]);
    } finally {
      sqlite.close();
      await client.end();
    }

    // records through both stores
    const before = openSqliteStore(path.join(dataDir, 'mediagate.db'));
    const after = await openPostgresStore({ url });
    try {
      for (const name of ['alice', 'bob'] as const) {
        const key = await after.keys.findActiveByHash(hashApiKey(secrets[name]));
        expect(key).toEqual(await before.keys.findActiveByHash(hashApiKey(secrets[name])));
        expect(key?.name).toBe(name);
      }
      expect(await after.keys.findActiveByHash(hashApiKey(secrets.carol))).toBeUndefined();
      expect((await after.keys.findByHash(hashApiKey(secrets.carol)))?.revokedAt).toEqual(expect.any(Number));
      // keys created in one millisecond list in an order each engine picks (by id on PostgreSQL)
      const byId = (keys: Array<{ id: string }>) => [...keys].sort((x, y) => x.id.localeCompare(y.id));
      expect(byId(await after.keys.list())).toEqual(byId(await before.keys.list()));
      for (const task of Object.values(tasks)) expect(await after.tasks.get(task.id)).toEqual(await before.tasks.get(task.id));
      expect(await countTasksByStatus(after.tasks)).toEqual({ queued: 1, processing: 2, completed: 2, failed: 1, cancelled: 1 });
      expect(await after.assets.getOwned(asset.id, asset.ownerKeyId)).toEqual(asset);
      expect(await after.usage.chatUsageByKey(asset.ownerKeyId)).toEqual([{ model: 'chat', requests: 2, promptTokens: 12, completionTokens: 24 }]);
      // usage ids continue after the copied ones
      await after.usage.recordChatUsage({
        keyId: asset.ownerKeyId,
        model: 'chat',
        requestId: 'req-3',
        promptTokens: 1,
        completionTokens: 1,
        createdAt: Date.now(),
      });
    } finally {
      await before.close();
      await after.close();
    }

    // files: every local result and asset file is in the bucket under the same folder and name
    const keys = await s3.keys();
    for (const task of [tasks.completed, tasks.idempotent]) {
      for (const file of task.result!.files) expect(keys).toContain(`results/${task.id}/${file.name}`);
    }
    expect(keys).toContain(`assets/${asset.id}/asset.png`);
    expect(await s3.object(`assets/${asset.id}/asset.png`)).toEqual(fs.readFileSync(path.join(dataDir, 'assets', asset.id, 'asset.png')));
  }, 120_000);

  it("a gateway on PostgreSQL answers the old task ids, serves their files from the bucket and recovers the dead worker's task", async () => {
    const gateway = await createGateway(loadConfig({ ...env, MEDIAGATE_DATABASE_URL: url, MEDIAGATE_LEASE_SECONDS: '2' }), { runnerPollMs: 50 });
    try {
      const auth = { authorization: `Bearer ${secrets.alice}` };
      const res = await gateway.app.inject({ method: 'GET', url: `/v1/result/${tasks.completed.id}`, headers: auth });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(JSON.stringify(body)).toContain(tasks.completed.id);
      const fileUrl = /"(http[^"]*\/files\/[^"]+)"/.exec(JSON.stringify(body))?.[1];
      expect(fileUrl).toBeDefined();
      const file = await gateway.app.inject({ method: 'GET', url: new URL(fileUrl!).pathname + new URL(fileUrl!).search });
      expect(file.statusCode).toBe(200);
      expect(file.rawPayload.length).toBe(tasks.completed.result!.files[0]!.bytes);
      // the revoked key stays revoked
      expect(
        (await gateway.app.inject({ method: 'GET', url: `/v1/result/${tasks.completed.id}`, headers: { authorization: `Bearer ${secrets.carol}` } }))
          .statusCode,
      ).toBe(401);
      // the task a dead worker held: its lapsed lease is recovered and a worker of this gateway finishes it
      gateway.runner!.start();
      const recovered = await waitFor(
        async () => {
          const t = await gateway.store.tasks.get(tasks.processing.id);
          return t?.status === 'completed' ? t : undefined;
        },
        30_000,
        "the dead worker's task to be recovered and completed",
      );
      expect(recovered.attempts).toBe(tasks.processing.attempts + 1);
      expect(recovered.leaseOwner).toBeNull();
    } finally {
      await gateway.close(1000);
    }
  }, 60_000);

  it('refuses a second run: the target holds data', async () => {
    const counts = async (): Promise<unknown> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query('SELECT (SELECT COUNT(*) FROM tasks) AS tasks, (SELECT COUNT(*) FROM api_keys) AS keys')).rows;
      } finally {
        await client.end();
      }
    };
    const held = await counts();
    const run = await runCliAsync(['migrate-store'], { ...env, MEDIAGATE_DATABASE_URL: url });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^migrate-store: postgres:\/\/.* already holds data \(api_keys, api_key_grace, (api_key_usage, )?audit_log, accounts, ledger, tasks, .*\); migrate-store only copies into an empty database, nothing was copied\n$/,
    );
    expect(await counts()).toEqual(held);
  }, 60_000);
});
