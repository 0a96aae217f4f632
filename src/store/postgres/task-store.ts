import type pg from 'pg';
import { deliveryIdSql } from '../delivery-rows.js';
import { holdRefusal } from '../ledger-rows.js';
import { storable } from './storable.js';
import { LIVE_COUNTS_SQL, PATCH_COLUMNS, columnValue, insertedRecord, toRecord, type TaskRow } from '../task-rows.js';
import type {
  InsertBounds,
  InsertRefusal,
  LiveTaskCount,
  NewTask,
  Settlement,
  TaskGuard,
  TaskPatchWithNote,
  TaskListQuery,
  TaskRecord,
  TaskStatus,
  TaskStore,
} from '../types.js';
import type { FamilyId } from '../../contract/families.js';
import { lockedAvailables, lockedKeyCaps, settleCtes, taskHoldsQuery } from './credit-store.js';
import { taskListSql } from '../task-list-sql.js';
import { inTransaction } from './transaction.js';
import { TurnBatch } from './turn-batch.js';

/**
 * Starting a queued task or a due check, in one statement (G181): the due check of a generation at
 * an upstream first (the earliest), else the next queued task in fair order (G85), each picked with
 * `FOR UPDATE SKIP LOCKED` so concurrent workers (of any process) pass over each other's rows
 * instead of waiting for or repeating them. The fair clock moves to the started task's turn.
 */
const claimSql = (provider: string): string => `
WITH due AS (
  SELECT id FROM tasks
  WHERE status = 'processing' AND lease_owner IS NULL AND ${provider} AND run_after <= $2
  ORDER BY run_after LIMIT 1 FOR UPDATE SKIP LOCKED
), checked AS (
  UPDATE tasks t SET lease_owner = $3, lease_expires_at = $4, updated_at = $5
  FROM due WHERE t.id = due.id RETURNING t.*
), next AS (
  SELECT id FROM tasks
  WHERE status = 'queued' AND ${provider} AND run_after <= $2 AND NOT EXISTS (SELECT 1 FROM due)
  ORDER BY vtime, created_at LIMIT 1 FOR UPDATE SKIP LOCKED
), started AS (
  UPDATE tasks t SET status = 'processing', lease_owner = $3, lease_expires_at = $4, attempts = t.attempts + 1,
    started_at = COALESCE(t.started_at, $2), updated_at = $5
  FROM next WHERE t.id = next.id RETURNING t.*
), clock AS (
  UPDATE fair_clock c SET vtime = started.vtime FROM started WHERE c.id = 1 AND c.vtime < started.vtime
)
SELECT * FROM checked UNION ALL SELECT * FROM started`;

/**
 * A batch of new tasks in one statement (all or none). Start-time fair queuing (G85): each key
 * reserves as many turns as it has tasks in the batch, from the end of its previous turn or from
 * the clock when it fell behind; the upsert locks the key's row, so concurrent submits of one key
 * take consecutive turns.
 */
const INSERT_SQL = `
WITH clock AS (SELECT vtime FROM fair_clock WHERE id = 1),
turns AS (
  INSERT INTO fair_keys AS f (key_id, last_vtime)
  SELECT k.key_id, (SELECT vtime FROM clock) + k.n FROM unnest($1::text[], $2::bigint[]) AS k(key_id, n) ORDER BY k.key_id
  ON CONFLICT (key_id) DO UPDATE SET last_vtime = excluded.last_vtime + GREATEST(f.last_vtime - (SELECT vtime FROM clock), 0)
  RETURNING key_id, last_vtime
)
INSERT INTO tasks (id, owner_key_id, family, form, model, provider, request, status, amount, created_at, updated_at, run_after, idempotency_key, vtime,
  account_id, hold_micro, per_second_micro, callback_url)
SELECT i.id, i.owner_key_id, i.family, i.form, i.model, i.provider, i.request, 'queued', i.amount, i.created_at, i.created_at, 0, i.idempotency_key,
  turns.last_vtime - i.back, i.account_id, i.hold_micro, i.per_second_micro, i.callback_url
FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::bigint[], $12::text[], $13::bigint[],
  $14::text[], $15::bigint[], $16::bigint[], $17::text[])
  AS i(id, owner_key_id, family, form, model, provider, request, amount, created_at, idempotency_key, back, account_id, hold_micro, per_second_micro, callback_url)
JOIN turns ON turns.key_id = i.owner_key_id`;

/** The transaction-scoped advisory lock of each key (sorted by the caller), held until commit (G198). */
const IN_FLIGHT_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtextextended('mediagate_in_flight:' || k, 0)) FROM unnest($1::text[]) AS k`;
/** Queued and processing tasks of each key, counted up to the bound. */
const IN_FLIGHT_COUNTS_SQL = `SELECT k AS key_id, (SELECT COUNT(*) FROM (SELECT 1 FROM tasks WHERE owner_key_id = k
  AND status IN ('queued', 'processing') LIMIT $2) x)::int AS n FROM unnest($1::text[]) AS k`;

const nextRunSql = (provider: string): string => `SELECT LEAST(
  (SELECT MIN(run_after) FROM tasks WHERE status = 'queued' AND ${provider}),
  (SELECT MIN(run_after) FROM tasks WHERE status = 'processing' AND lease_owner IS NULL AND ${provider})) AS t`;

/**
 * Statements over one provider (the runner claims provider by provider) compare it with `=`: the
 * planner then reads the claim's partial indexes in order and stops at the first row, where
 * `= ANY(array)` would sort every candidate of the array's providers first.
 */
/** The poll's read: a task by id, if the (active) key of hash `$2` owns it. */
export const BY_KEY_HASH_SQL = `SELECT t.*, k.expires_at AS key_expires_at FROM tasks t JOIN api_keys k ON k.id = t.owner_key_id
WHERE t.id = $1 AND k.hash = $2 AND k.revoked_at IS NULL`;
/** The same for a batch of (id, hash) pairs (G193): each row comes with the index of its pair. */
const BY_KEY_HASHES_SQL = `
SELECT q.i, t.*, k.expires_at AS key_expires_at FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(id, hash, i)
JOIN tasks t ON t.id = q.id
JOIN api_keys k ON k.id = t.owner_key_id
WHERE k.hash = q.hash AND k.revoked_at IS NULL`;

/** A poll's task and its owner key's expiry (G305), checked against the caller's clock. */
interface OwnedTask {
  task: TaskRecord;
  keyExpiresAt: number | null;
}

const ONE_PROVIDER = 'provider = $1';
const SOME_PROVIDERS = 'provider = ANY($1::text[])';
/** The claim's statements (exported for bench/table-size.js's query plans). */
export const CLAIM = { one: claimSql(ONE_PROVIDER), some: claimSql(SOME_PROVIDERS) };
/** Queued and processing tasks of owner `$1`, counted up to `$2`. */
export const IN_FLIGHT_SQL = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM tasks WHERE owner_key_id = $1 AND status IN ('queued', 'processing') LIMIT $2) x`;
const NEXT_RUN = { one: nextRunSql(ONE_PROVIDER), some: nextRunSql(SOME_PROVIDERS) };

/** A terminal update's webhook delivery (G210), when the task has a callback URL; `t` is the updated row. */
const OUTBOX_CTE = `,
w AS (INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
  SELECT ${deliveryIdSql('t.id')}, t.id, t.owner_key_id, t.callback_url, 'pending', t.updated_at, t.updated_at FROM t WHERE t.callback_url IS NOT NULL
  ON CONFLICT DO NOTHING)`;

/** At most this many tasks per insert statement (more batches wait for the next). */
const MAX_INSERT = 1000;

interface WaitingInsert {
  tasks: readonly NewTask[];
  /** What the tasks are inserted within. */
  bounds: InsertBounds;
  resolve: (records: Array<TaskRecord | InsertRefusal>) => void;
  reject: (err: unknown) => void;
}

/** PostgreSQL task store: the tasks table is the queue; every state change is one conditional UPDATE. */
export class PostgresTaskStore implements TaskStore {
  private readonly listeners = new Set<(id: string) => void>();
  private readonly queueListeners = new Set<(provider: string) => void>();
  private readonly cancelListeners = new Set<(id: string) => void>();
  /** Statement names of the conditional updates, by their text (pg prepares a named statement once per connection). */
  private readonly updateNames = new Map<string, string>();
  private missedNotifications = false;
  /** Batches waiting for the insert statement in flight to finish (G194). */
  private readonly waitingInserts: WaitingInsert[] = [];
  private inserting = false;
  /** The polls of one event-loop turn, read in one query (G193). */
  private readonly byKeyHash = new TurnBatch<{ id: string; keyHash: string }, OwnedTask>(
    ({ id, keyHash }) => `${keyHash} ${id}`,
    (lookups) => this.readByKeyHashes(lookups),
  );

  constructor(private readonly pool: pg.Pool) {}

  /**
   * One insert at a time (G194): batches handed in while one is committing wait and go together in
   * the next. Concurrent statements would only queue on the keys' fair_keys rows (each holds its
   * keys' rows until its commit) while each holding a pooled connection; one at a time, an insert
   * takes whatever arrived during the last commit. Each call stays all or none: when a joint
   * insert fails, its batches are tried again one by one.
   * G198, G200: the bound and the holds are checked in their transaction (`insertNow`).
   */
  insertWithinBound(tasks: readonly NewTask[], bounds: InsertBounds): Promise<Array<TaskRecord | InsertRefusal>> {
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waitingInserts.push({ tasks, bounds: { maxInFlight: Math.max(0, bounds.maxInFlight), enforceCredits: bounds.enforceCredits }, resolve, reject });
      if (!this.inserting) this.insertWaiting();
    });
  }

  /** Takes the waiting batches of equal bounds (at most MAX_INSERT tasks, at least one batch) into one insert. */
  private insertWaiting(): void {
    const batches: WaitingInsert[] = [];
    const { bounds } = this.waitingInserts[0]!;
    const same = (b: InsertBounds): boolean => b.maxInFlight === bounds.maxInFlight && b.enforceCredits === bounds.enforceCredits;
    let count = 0;
    for (let i = 0; i < this.waitingInserts.length; ) {
      const next = this.waitingInserts[i]!;
      if (!same(next.bounds) || (batches.length > 0 && count + next.tasks.length > MAX_INSERT)) {
        i++;
        continue;
      }
      this.waitingInserts.splice(i, 1);
      batches.push(next);
      count += next.tasks.length;
    }
    this.inserting = true;
    void this.insertBatches(batches, bounds).finally(() => {
      this.inserting = false;
      if (this.waitingInserts.length > 0) this.insertWaiting();
    });
  }

  private async insertBatches(batches: WaitingInsert[], bounds: InsertBounds): Promise<void> {
    try {
      const records = await this.insertNow(
        batches.flatMap((b) => b.tasks),
        bounds,
      );
      let at = 0;
      for (const b of batches) {
        b.resolve(records.slice(at, at + b.tasks.length));
        at += b.tasks.length;
      }
    } catch (err) {
      if (batches.length === 1) {
        batches[0]!.reject(err);
        return;
      }
      for (const b of batches) await this.insertNow(b.tasks, bounds).then(b.resolve, b.reject);
    }
  }

  /**
   * G198, G200: a batch with neither a bound nor a hold is one statement. Otherwise one
   * transaction: the keys' advisory locks (in key order: no deadlock between processes), then the
   * accounts' rows (locked, in id order), then the keys' counts (a statement after the locks: it
   * sees every batch committed before), then the inserts and the holds of the tasks that fit.
   */
  private async insertNow(tasks: readonly NewTask[], bounds: InsertBounds): Promise<Array<TaskRecord | InsertRefusal>> {
    const { enforceCredits } = bounds;
    // each task's bound: its key's own (G306), else the server's; the counts read up to the largest
    const boundOf = (t: NewTask): number => t.inFlightBound ?? bounds.maxInFlight;
    const maxInFlight = Math.max(0, ...tasks.map(boundOf));
    let refusals: Array<InsertRefusal | undefined> = [];
    if (maxInFlight <= 0 && !tasks.some((t) => t.charge)) {
      await this.pool.query(insertQuery(tasks));
    } else {
      refusals = await inTransaction(this.pool, async (client) => {
        const keys = [...new Set(tasks.map((t) => t.ownerKeyId))].sort();
        if (maxInFlight > 0) await client.query({ name: 'mg_in_flight_lock', text: IN_FLIGHT_LOCK_SQL, values: [keys] });
        const accounts = [...new Set(tasks.flatMap((t) => (t.charge ? [t.charge.accountId] : [])))];
        const available = accounts.length > 0 ? await lockedAvailables(client, accounts) : new Map<string, number>();
        const caps = enforceCredits && accounts.length > 0 ? await lockedKeyCaps(client, keys) : new Map<string, { capMicro: number; usedMicro: number }>();
        const inFlight = new Map<string, number>();
        if (maxInFlight > 0) {
          const { rows } = await client.query<{ key_id: string; n: number }>({
            name: 'mg_in_flight_counts',
            text: IN_FLIGHT_COUNTS_SQL,
            values: [keys, maxInFlight],
          });
          for (const r of rows) inFlight.set(r.key_id, r.n);
        }
        const out = tasks.map((t): InsertRefusal | undefined => {
          const n = inFlight.get(t.ownerKeyId) ?? 0;
          if (boundOf(t) > 0 && n >= boundOf(t)) return { refused: 'in_flight' };
          if (t.charge && enforceCredits) {
            const left = available.get(t.charge.accountId);
            if (left === undefined) throw new Error(`no account ${t.charge.accountId}`);
            const cap = caps.get(t.ownerKeyId);
            const refusal = holdRefusal(t.charge.holdMicro, left, cap);
            if (refusal) return refusal;
            available.set(t.charge.accountId, left - t.charge.holdMicro);
            if (cap) caps.set(t.ownerKeyId, { ...cap, usedMicro: cap.usedMicro + t.charge.holdMicro });
          }
          inFlight.set(t.ownerKeyId, n + 1);
          return undefined;
        });
        const inserted = tasks.filter((_, i) => !out[i]);
        if (inserted.length > 0) {
          await client.query(insertQuery(inserted));
          const holds = taskHoldsQuery(inserted);
          if (holds) await client.query(holds);
        }
        return out;
      });
    }
    return tasks.map((t, i) => {
      const refusal = refusals[i];
      if (refusal) return refusal;
      this.changed(t.id);
      return insertedRecord(t);
    });
  }

  async getOwnedByKeyHash(id: string, keyHash: string, now = Date.now()): Promise<TaskRecord | undefined> {
    // not sent: it would fail the whole batch of lookups, other callers' included
    if (!storable(id)) return undefined;
    const owned = await this.byKeyHash.get({ id, keyHash });
    return owned && (owned.keyExpiresAt === null || owned.keyExpiresAt > now) ? owned.task : undefined; // G305
  }

  private async readByKeyHashes(lookups: { id: string; keyHash: string }[]): Promise<Map<string, OwnedTask>> {
    const found = new Map<string, OwnedTask>();
    const owned = (row: TaskRow & { key_expires_at: string | number | null }): OwnedTask => ({
      task: toRecord(row),
      keyExpiresAt: row.key_expires_at === null ? null : Number(row.key_expires_at),
    });
    if (lookups.length === 1) {
      const { id, keyHash } = lookups[0]!;
      const { rows } = await this.pool.query<TaskRow & { key_expires_at: string | null }>({
        name: 'mg_tasks_by_key_hash_v2',
        text: BY_KEY_HASH_SQL,
        values: [id, keyHash],
      });
      if (rows[0]) found.set(`${keyHash} ${id}`, owned(rows[0]));
      return found;
    }
    const { rows } = await this.pool.query<TaskRow & { i: number; key_expires_at: string | null }>({
      name: 'mg_tasks_by_key_hashes_v2',
      text: BY_KEY_HASHES_SQL,
      values: [lookups.map((l) => l.id), lookups.map((l) => l.keyHash)],
    });
    for (const row of rows) {
      const { id, keyHash } = lookups[row.i - 1]!; // WITH ORDINALITY counts from 1
      found.set(`${keyHash} ${id}`, owned(row));
    }
    return found;
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    if (!storable(id)) return undefined;
    return this.one({ name: 'mg_tasks_get', text: 'SELECT * FROM tasks WHERE id = $1', values: [id] });
  }

  async getOwned(id: string, ownerKeyId: string): Promise<TaskRecord | undefined> {
    if (!storable(id)) return undefined;
    return this.one({ name: 'mg_tasks_get_owned', text: 'SELECT * FROM tasks WHERE id = $1 AND owner_key_id = $2', values: [id, ownerKeyId] });
  }

  async listTasks(query: TaskListQuery): Promise<TaskRecord[]> {
    const { shape, text, values } = taskListSql(query, (n) => `$${n}`);
    return this.all({ name: `mg_tasks_list_${shape}`, text, values });
  }

  async updateIf(id: string, guard: TaskGuard, patch: TaskPatchWithNote, settle?: Settlement): Promise<TaskRecord | undefined> {
    const keys = (Object.keys(patch) as (keyof TaskPatchWithNote)[]).filter((k) => patch[k] !== undefined);
    const values: unknown[] = [id, guard.statusIn];
    const param = (value: unknown): string => `$${values.push(value)}`;
    const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = ${param(columnValue(patch, k))}`);
    if (patch.upstream !== undefined) sets.push(`upstream_ref_id = ${param(patch.upstream?.ref?.id ?? null)}`);
    sets.push(`updated_at = ${param(Date.now())}`);
    const where = ['id = $1', 'status = ANY($2::text[])'];
    if (guard.leaseOwner !== undefined) where.push(`lease_owner = ${param(guard.leaseOwner)}`);
    if (guard.leaseExpiredBefore !== undefined) where.push(`lease_expires_at < ${param(guard.leaseExpiredBefore)}`);
    if (guard.unleased) where.push('lease_owner IS NULL');
    if (guard.upstreamId !== undefined) where.push(`upstream_ref_id = ${param(guard.upstreamId)}`);
    const update = `UPDATE tasks SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`;
    // a settlement and the webhook delivery are part of the same statement: they happen exactly when the update does (G201, G210)
    const text = settle
      ? `WITH t AS (${update})${settleCtes(param(settle.kind), param(settle.kind === 'capture' ? settle.amountMicro : 0), param(Date.now()))}${OUTBOX_CTE}\nSELECT * FROM t`
      : update;
    let name = this.updateNames.get(text);
    if (name === undefined) {
      name = `mg_tasks_update_${this.updateNames.size}`;
      this.updateNames.set(text, name);
    }
    const task = await this.one({ name, text, values });
    if (task) this.changed(id);
    return task;
  }

  async claimNext(providers: readonly string[], workerId: string, now: number, leaseUntil: number): Promise<TaskRecord | undefined> {
    if (providers.length === 0) return undefined;
    const one = providers.length === 1;
    const task = await this.one({
      name: one ? 'mg_tasks_claim_one' : 'mg_tasks_claim',
      text: one ? CLAIM.one : CLAIM.some,
      values: [one ? providers[0] : providers, now, workerId, leaseUntil, now],
    });
    if (task) this.changed(task.id);
    return task;
  }

  async renewLease(id: string, workerId: string, leaseUntil: number): Promise<boolean> {
    return this.wrote(id, {
      name: 'mg_tasks_renew',
      text: `UPDATE tasks SET lease_expires_at = $1, updated_at = $2 WHERE id = $3 AND status = 'processing' AND lease_owner = $4`,
      values: [leaseUntil, Date.now(), id, workerId],
    });
  }

  async setProgress(id: string, workerId: string, progress: number): Promise<boolean> {
    return this.wrote(id, {
      name: 'mg_tasks_progress',
      text: `UPDATE tasks SET progress = GREATEST(progress, $1), updated_at = $2 WHERE id = $3 AND status = 'processing' AND lease_owner = $4`,
      values: [progress, Date.now(), id, workerId],
    });
  }

  async listLapsedLeases(now: number, limit: number): Promise<TaskRecord[]> {
    return this.all({
      name: 'mg_tasks_lapsed',
      text: `SELECT * FROM tasks WHERE status = 'processing' AND lease_expires_at < $1 ORDER BY lease_expires_at LIMIT $2`,
      values: [now, limit],
    });
  }

  async listExpired(now: number, limit: number): Promise<TaskRecord[]> {
    return this.all({
      name: 'mg_tasks_expired',
      text: 'SELECT * FROM tasks WHERE expires_at IS NOT NULL AND expires_at < $1 ORDER BY expires_at LIMIT $2',
      values: [now, limit],
    });
  }

  async listQueuedBefore(createdBefore: number, limit: number): Promise<TaskRecord[]> {
    return this.all({
      name: 'mg_tasks_queued_before',
      text: "SELECT * FROM tasks WHERE status = 'queued' AND created_at < $1 ORDER BY created_at LIMIT $2",
      values: [createdBefore, limit],
    });
  }

  async nextRunAfter(providers: readonly string[]): Promise<number | undefined> {
    if (providers.length === 0) return undefined;
    const one = providers.length === 1;
    const { rows } = await this.pool.query<{ t: number | null }>({
      name: one ? 'mg_tasks_next_run_one' : 'mg_tasks_next_run',
      text: one ? NEXT_RUN.one : NEXT_RUN.some,
      values: [one ? providers[0] : providers],
    });
    return rows[0]?.t ?? undefined;
  }

  async clearExpiry(id: string): Promise<void> {
    await this.wrote(id, { name: 'mg_tasks_clear_expiry', text: 'UPDATE tasks SET expires_at = NULL WHERE id = $1', values: [id] });
  }

  async delete(id: string): Promise<boolean> {
    return this.wrote(id, { name: 'mg_tasks_delete', text: 'DELETE FROM tasks WHERE id = $1', values: [id] });
  }

  /** Not in the contract (G394): the tests count every row with it (test/helpers/task-rows.ts). */
  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const counts: Record<TaskStatus, number> = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 };
    const { rows } = await this.pool.query<{ status: TaskStatus; n: number }>('SELECT status, COUNT(*) AS n FROM tasks GROUP BY status');
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  async liveCounts(): Promise<LiveTaskCount[]> {
    const { rows } = await this.pool.query<{ family: FamilyId; model: string; status: LiveTaskCount['status']; n: string; oldest: string }>({
      name: 'mg_tasks_live_counts',
      text: LIVE_COUNTS_SQL,
    });
    return rows.map((r) => ({ family: r.family, model: r.model, status: r.status, count: Number(r.n), oldestCreatedAt: Number(r.oldest) }));
  }

  async countInFlight(ownerKeyId: string, upTo: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>({
      name: 'mg_tasks_in_flight',
      text: IN_FLIGHT_SQL,
      values: [ownerKeyId, upTo],
    });
    return rows[0]!.n;
  }

  /** Writes through this instance are reported at once; other instances' writes when their NOTIFY arrives (G183). */
  watchChanges(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** See TaskStore.watchQueue (G184); `''` follows a lost LISTEN connection. */
  watchQueue(listener: (provider: string) => void): () => void {
    this.queueListeners.add(listener);
    return () => {
      this.queueListeners.delete(listener);
    };
  }

  /** See TaskStore.watchCancels (G184): cancels by any instance, this one's included. */
  watchCancels(listener: (id: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => {
      this.cancelListeners.delete(listener);
    };
  }

  /**
   * True once after the LISTEN connection was lost and re-established: notifications of other
   * processes' writes may have been missed meanwhile, so waiters should read again (G183).
   */
  changedElsewhere(): boolean {
    const missed = this.missedNotifications;
    this.missedNotifications = false;
    return missed;
  }

  /** From the LISTEN connection: another instance committed a write to task `id`. */
  changedByOther(id: string): void {
    for (const listener of this.listeners) listener(id);
  }

  /** From the LISTEN connection: a task of `provider` may be claimed now. */
  queueChanged(provider: string): void {
    for (const listener of this.queueListeners) listener(provider);
  }

  /** From the LISTEN connection: task `id` was cancelled. */
  cancelled(id: string): void {
    for (const listener of this.cancelListeners) listener(id);
  }

  /** From the LISTEN connection: it was re-established; what was announced meanwhile is lost. */
  resumed(): void {
    this.missedNotifications = true;
    this.queueChanged('');
  }

  private changed(id: string): void {
    for (const listener of this.listeners) listener(id);
  }

  private async wrote(id: string, query: pg.QueryConfig): Promise<boolean> {
    const { rowCount } = await this.pool.query(query);
    if (rowCount !== 1) return false;
    this.changed(id);
    return true;
  }

  private async one(query: pg.QueryConfig): Promise<TaskRecord | undefined> {
    const { rows } = await this.pool.query<TaskRow>(query);
    return rows[0] && toRecord(rows[0]);
  }

  private async all(query: pg.QueryConfig): Promise<TaskRecord[]> {
    const { rows } = await this.pool.query<TaskRow>(query);
    return rows.map(toRecord);
  }
}

/** The group insert of `tasks` (taking their keys' turns, G85). */
function insertQuery(tasks: readonly NewTask[]): pg.QueryConfig {
  const perKey = new Map<string, number>();
  for (const t of tasks) perKey.set(t.ownerKeyId, (perKey.get(t.ownerKeyId) ?? 0) + 1);
  const seen = new Map<string, number>();
  const back = tasks.map((t) => {
    const j = seen.get(t.ownerKeyId) ?? 0;
    seen.set(t.ownerKeyId, j + 1);
    return perKey.get(t.ownerKeyId)! - j; // the j-th task of its key takes turn end - n + j
  });
  return {
    name: 'mg_tasks_insert',
    text: INSERT_SQL,
    values: [
      [...perKey.keys()],
      [...perKey.values()],
      tasks.map((t) => t.id),
      tasks.map((t) => t.ownerKeyId),
      tasks.map((t) => t.family),
      tasks.map((t) => t.form),
      tasks.map((t) => t.model),
      tasks.map((t) => t.provider),
      tasks.map((t) => JSON.stringify(t.request)),
      tasks.map((t) => t.amount),
      tasks.map((t) => t.createdAt),
      tasks.map((t) => t.idempotencyKey ?? null),
      back,
      tasks.map((t) => t.charge?.accountId ?? null),
      tasks.map((t) => t.charge?.holdMicro ?? null),
      tasks.map((t) => t.charge?.perSecondMicro ?? null),
      tasks.map((t) => t.callbackUrl ?? null),
    ],
  };
}
