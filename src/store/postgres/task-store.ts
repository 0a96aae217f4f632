import type pg from 'pg';
import { PATCH_COLUMNS, columnValue, insertedRecord, toRecord, type TaskRow } from '../task-rows.js';
import type { NewTask, TaskGuard, TaskPatch, TaskRecord, TaskStatus, TaskStore } from '../types.js';

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
INSERT INTO tasks (id, owner_key_id, family, form, model, provider, request, status, amount, created_at, updated_at, run_after, idempotency_key, vtime)
SELECT i.id, i.owner_key_id, i.family, i.form, i.model, i.provider, i.request, 'queued', i.amount, i.created_at, i.created_at, 0, i.idempotency_key,
  turns.last_vtime - i.back
FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::bigint[], $12::text[], $13::bigint[])
  AS i(id, owner_key_id, family, form, model, provider, request, amount, created_at, idempotency_key, back)
JOIN turns ON turns.key_id = i.owner_key_id`;

const nextRunSql = (provider: string): string => `SELECT LEAST(
  (SELECT MIN(run_after) FROM tasks WHERE status = 'queued' AND ${provider}),
  (SELECT MIN(run_after) FROM tasks WHERE status = 'processing' AND lease_owner IS NULL AND ${provider})) AS t`;

/**
 * Statements over one provider (the runner claims provider by provider) compare it with `=`: the
 * planner then reads the claim's partial indexes in order and stops at the first row, where
 * `= ANY(array)` would sort every candidate of the array's providers first.
 */
const ONE_PROVIDER = 'provider = $1';
const SOME_PROVIDERS = 'provider = ANY($1::text[])';
const CLAIM = { one: claimSql(ONE_PROVIDER), some: claimSql(SOME_PROVIDERS) };
const NEXT_RUN = { one: nextRunSql(ONE_PROVIDER), some: nextRunSql(SOME_PROVIDERS) };

/** PostgreSQL task store: the tasks table is the queue; every state change is one conditional UPDATE. */
export class PostgresTaskStore implements TaskStore {
  private readonly listeners = new Set<(id: string) => void>();
  private readonly queueListeners = new Set<(provider: string) => void>();
  private readonly cancelListeners = new Set<(id: string) => void>();
  /** Statement names of the conditional updates, by their text (pg prepares a named statement once per connection). */
  private readonly updateNames = new Map<string, string>();
  private missedNotifications = false;

  constructor(private readonly pool: pg.Pool) {}

  async insert(task: NewTask): Promise<TaskRecord> {
    return (await this.insertMany([task]))[0]!;
  }

  async insertMany(tasks: readonly NewTask[]): Promise<TaskRecord[]> {
    if (tasks.length === 0) return [];
    const perKey = new Map<string, number>();
    for (const t of tasks) perKey.set(t.ownerKeyId, (perKey.get(t.ownerKeyId) ?? 0) + 1);
    const seen = new Map<string, number>();
    const back = tasks.map((t) => {
      const j = seen.get(t.ownerKeyId) ?? 0;
      seen.set(t.ownerKeyId, j + 1);
      return perKey.get(t.ownerKeyId)! - j; // the j-th task of its key takes turn end - n + j
    });
    await this.pool.query({
      name: 'mg_tasks_insert', text: INSERT_SQL, values: [
        [...perKey.keys()], [...perKey.values()],
        tasks.map((t) => t.id), tasks.map((t) => t.ownerKeyId), tasks.map((t) => t.family), tasks.map((t) => t.form),
        tasks.map((t) => t.model), tasks.map((t) => t.provider), tasks.map((t) => JSON.stringify(t.request)),
        tasks.map((t) => t.amount), tasks.map((t) => t.createdAt), tasks.map((t) => t.idempotencyKey ?? null), back,
      ],
    });
    for (const t of tasks) this.changed(t.id);
    return tasks.map(insertedRecord);
  }

  async getOwnedByKeyHash(id: string, keyHash: string): Promise<TaskRecord | undefined> {
    return this.one({
      name: 'mg_tasks_by_key_hash',
      text: `SELECT t.* FROM tasks t JOIN api_keys k ON k.id = t.owner_key_id WHERE t.id = $1 AND k.hash = $2 AND k.revoked_at IS NULL`,
      values: [id, keyHash],
    });
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    return this.one({ name: 'mg_tasks_get', text: 'SELECT * FROM tasks WHERE id = $1', values: [id] });
  }

  async getOwned(id: string, ownerKeyId: string): Promise<TaskRecord | undefined> {
    return this.one({ name: 'mg_tasks_get_owned', text: 'SELECT * FROM tasks WHERE id = $1 AND owner_key_id = $2', values: [id, ownerKeyId] });
  }

  async updateIf(id: string, guard: TaskGuard, patch: TaskPatch): Promise<TaskRecord | undefined> {
    const keys = (Object.keys(patch) as (keyof TaskPatch)[]).filter((k) => patch[k] !== undefined);
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
    const text = `UPDATE tasks SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`;
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
      name: one ? 'mg_tasks_claim_one' : 'mg_tasks_claim', text: one ? CLAIM.one : CLAIM.some,
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

  async nextRunAfter(providers: readonly string[]): Promise<number | undefined> {
    if (providers.length === 0) return undefined;
    const one = providers.length === 1;
    const { rows } = await this.pool.query<{ t: number | null }>({
      name: one ? 'mg_tasks_next_run_one' : 'mg_tasks_next_run', text: one ? NEXT_RUN.one : NEXT_RUN.some, values: [one ? providers[0] : providers],
    });
    return rows[0]?.t ?? undefined;
  }

  async clearExpiry(id: string): Promise<void> {
    await this.wrote(id, { name: 'mg_tasks_clear_expiry', text: 'UPDATE tasks SET expires_at = NULL WHERE id = $1', values: [id] });
  }

  async delete(id: string): Promise<boolean> {
    return this.wrote(id, { name: 'mg_tasks_delete', text: 'DELETE FROM tasks WHERE id = $1', values: [id] });
  }

  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const counts: Record<TaskStatus, number> = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 };
    const { rows } = await this.pool.query<{ status: TaskStatus; n: number }>('SELECT status, COUNT(*) AS n FROM tasks GROUP BY status');
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  async countInFlight(ownerKeyId: string, upTo: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>({
      name: 'mg_tasks_in_flight',
      text: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM tasks WHERE owner_key_id = $1 AND status IN ('queued', 'processing') LIMIT $2) x`,
      values: [ownerKeyId, upTo],
    });
    return rows[0]!.n;
  }

  /** Writes through this instance are reported at once; other instances' writes when their NOTIFY arrives (G183). */
  watchChanges(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /** See TaskStore.watchQueue (G184); `''` follows a lost LISTEN connection. */
  watchQueue(listener: (provider: string) => void): () => void {
    this.queueListeners.add(listener);
    return () => { this.queueListeners.delete(listener); };
  }

  /** See TaskStore.watchCancels (G184): cancels by any instance, this one's included. */
  watchCancels(listener: (id: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => { this.cancelListeners.delete(listener); };
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
