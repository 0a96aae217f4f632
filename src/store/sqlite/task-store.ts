import type Database from 'better-sqlite3';
import { LIVE_COUNTS_SQL, PATCH_COLUMNS, columnValue, insertedRecord, toRecord, type TaskRow } from '../task-rows.js';
import { taskListSql } from '../task-list-sql.js';
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
import { SqliteLedger } from './credit-store.js';
import { SqliteOutbox } from './webhook-store.js';
import { SqliteSubmittedCounts } from './submitted-counts.js';
import { DataVersionWatch } from './data-version.js';
import type { SqliteReadCache } from './read-cache.js';

/** A poll-path read: the task and the hash of the key it was read for. */
export interface OwnedTaskEntry {
  keyHash: string;
  task: TaskRecord /** The owner key's `expiresAt` (G305): a cached entry is no answer past it. */;
  keyExpiresAt: number | null;
}

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * The claim's two statements for `n` providers. Each picks its row by the index named (INDEXED
 * BY): without statistics (the store never runs ANALYZE) SQLite read the queued tasks by
 * (provider, run_after) and sorted them all for the fair order, ~5 ms a claim at 45,000 queued; the
 * fair index gives the first row at once (G255). The runner claims one provider at a time; a claim
 * over several sorts their queued tasks.
 */
export const CLAIM_SQL = {
  /** A due check of a generation at an upstream: the earliest first, attempts unchanged. */
  check: (n: number): string => `UPDATE tasks SET lease_owner = ?, lease_expires_at = ?, updated_at = ?
    WHERE id = (SELECT id FROM tasks INDEXED BY tasks_checks WHERE status = 'processing' AND lease_owner IS NULL
                AND provider IN (${placeholders(n)}) AND run_after <= ? ORDER BY run_after LIMIT 1)
      AND status = 'processing' AND lease_owner IS NULL
    RETURNING *`,
  /** The next queued task in fair order, started. */
  start: (n: number): string => `UPDATE tasks SET status = 'processing', lease_owner = ?, lease_expires_at = ?,
      attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?
    WHERE id = (SELECT id FROM tasks INDEXED BY tasks_fair_queue WHERE status = 'queued' AND provider IN (${placeholders(n)})
                AND run_after <= ? ORDER BY vtime, created_at LIMIT 1)
      AND status = 'queued'
    RETURNING *`,
};

/**
 * `nextRunAfter` for `n` providers (each bound twice, in turn): one MIN per provider and kind, each
 * the first entry of a partial index (tasks_queue, tasks_checks). An OR over both kinds, or an IN
 * over providers, made SQLite read every queued task instead (7 ms at 45,000 queued, on every fill
 * of the runner; G255).
 */
export const nextRunSql = (n: number): string => {
  const perProvider = `SELECT (SELECT MIN(run_after) FROM tasks WHERE status = 'queued' AND provider = ?) AS t
    UNION ALL SELECT (SELECT MIN(run_after) FROM tasks WHERE status = 'processing' AND lease_owner IS NULL AND provider = ?)`;
  return `SELECT MIN(t) AS t FROM (${Array.from({ length: n }, () => perProvider).join(' UNION ALL ')})`;
};

/** SQLite task store: prepared statements, one conditional UPDATE per state change. */
export class SqliteTaskStore implements TaskStore {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly getOwnedStmt: Database.Statement;
  private readonly getByKeyHashStmt: Database.Statement;
  /** Inserts the tasks within their bounds, each with its hold; undefined for each inserted, else why not. */
  private readonly insertBatch: (tasks: readonly NewTask[], bounds: InsertBounds) => Array<InsertRefusal | undefined>;
  private readonly ledger: SqliteLedger;
  private readonly outbox: SqliteOutbox;
  /** A conditional update and, when it wins, the settlement of the task's hold and its webhook delivery: one transaction (G201, G210). */
  private readonly settleUpdate: (stmt: Database.Statement, params: unknown[], settle: Settlement) => TaskRow | undefined;
  private readonly renewStmt: Database.Statement;
  private readonly progressStmt: Database.Statement;
  private readonly lapsedStmt: Database.Statement;
  private readonly expiredStmt: Database.Statement;
  private readonly queuedBeforeStmt: Database.Statement;
  private readonly deleteStmt: Database.Statement;
  private readonly inFlightStmt: Database.Statement;
  private readonly updateCache = new Map<string, Database.Statement>();
  private readonly claimCache = new Map<number, Database.Transaction<(...params: unknown[]) => TaskRow | undefined>>();
  private readonly nextRunCache = new Map<number, Database.Statement>();
  private readonly listCache = new Map<string, Database.Statement>();

  private readonly listeners = new Set<(id: string) => void>();
  private readonly others: DataVersionWatch;

  /** `polls` caches `getOwnedByKeyHash`; every write below drops the task it touched and tells the watchers. */
  constructor(
    private readonly db: Database.Database,
    private readonly polls: SqliteReadCache<OwnedTaskEntry>,
  ) {
    this.others = new DataVersionWatch(db);
    this.ledger = new SqliteLedger(db);
    this.outbox = new SqliteOutbox(db);
    const submitted = new SqliteSubmittedCounts(db);
    this.insertStmt = db.prepare(`INSERT INTO tasks (id, owner_key_id, family, form, model, provider, request, status,
      amount, created_at, updated_at, run_after, idempotency_key, vtime, account_id, hold_micro, per_second_micro, callback_url)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`);
    const clockStmt = db.prepare('SELECT vtime FROM fair_clock WHERE id = 1').pluck();
    const keyTurnStmt = db.prepare('SELECT last_vtime FROM fair_keys WHERE key_id = ?').pluck(); // the end of the key's last turn
    const setKeyTurnStmt = db.prepare(`INSERT INTO fair_keys (key_id, last_vtime) VALUES (?, ?)
      ON CONFLICT (key_id) DO UPDATE SET last_vtime = excluded.last_vtime`);
    const insertBatch = db.transaction((tasks: readonly NewTask[], { maxInFlight, enforceCredits }: InsertBounds) => {
      // Start-time fair queuing (G85): a task's turn is the end of its key's previous turn, or the
      // clock (the turn of the last claimed task) when the key has fallen behind it; a turn ends one
      // later. A key that had nothing waiting thus comes next, and backlogs take turns.
      const clock = clockStmt.get() as number;
      const turns = new Map<string, number>();
      /** Each key's tasks in flight: counted once per batch (the write lock keeps other processes out), then kept up here (G198). */
      const inFlight = new Map<string, number>();
      const inserted: NewTask[] = [];
      // the holds' balance and cap reads and totals once per account and key (G407)
      const holds = this.ledger.batch();
      const refusals = tasks.map((t): InsertRefusal | undefined => {
        const bound = t.inFlightBound ?? maxInFlight; // the key's own bound first (G306)
        const n = bound > 0 ? (inFlight.get(t.ownerKeyId) ?? (this.inFlightStmt.get(t.ownerKeyId, bound) as number)) : 0;
        if (bound > 0 && n >= bound) return { refused: 'in_flight' };
        // the balance sees this transaction's own holds (G200)
        if (t.charge && enforceCredits) {
          const refusal = holds.refusal(t.charge.accountId, t.ownerKeyId, t.charge.holdMicro);
          if (refusal) return refusal;
        }
        inFlight.set(t.ownerKeyId, n + 1);
        let end = turns.get(t.ownerKeyId);
        if (end === undefined) end = (keyTurnStmt.get(t.ownerKeyId) as number | undefined) ?? 0;
        const vtime = Math.max(end, clock);
        turns.set(t.ownerKeyId, vtime + 1);
        const c = t.charge;
        this.insertStmt.run(
          t.id,
          t.ownerKeyId,
          t.family,
          t.form,
          t.model,
          t.provider,
          JSON.stringify(t.request),
          t.amount,
          t.createdAt,
          t.createdAt,
          t.idempotencyKey ?? null,
          vtime,
          c?.accountId ?? null,
          c?.holdMicro ?? null,
          c?.perSecondMicro ?? null,
          t.callbackUrl ?? null,
        );
        if (c) holds.hold(c.accountId, c.holdMicro, { keyId: t.ownerKeyId, taskId: t.id, model: t.model }, t.createdAt);
        inserted.push(t);
        return undefined;
      });
      holds.write();
      for (const [key, vtime] of turns) setKeyTurnStmt.run(key, vtime);
      submitted.count(inserted);
      return refusals;
    });
    // IMMEDIATE: the write lock from the start, so the reads above are never of a snapshot another
    // process's commit has made stale (which SQLite refuses at the first write, SQLITE_BUSY_SNAPSHOT)
    this.insertBatch = (tasks, bounds) => insertBatch.immediate(tasks, bounds);
    const settleUpdate = db.transaction((stmt: Database.Statement, params: unknown[], settle: Settlement) => {
      const row = stmt.get(...params) as TaskRow | undefined;
      if (row?.account_id)
        this.ledger.settle(row.account_id, row.hold_micro ?? 0, settle, { keyId: row.owner_key_id, taskId: row.id, model: row.model }, row.updated_at);
      if (row?.callback_url) this.outbox.enqueue(row.id, row.updated_at);
      return row;
    });
    this.settleUpdate = (stmt, params, settle) => settleUpdate.immediate(stmt, params, settle);
    this.getByKeyHashStmt = db.prepare(`SELECT t.*, k.expires_at AS key_expires_at FROM tasks t JOIN api_keys k ON k.id = t.owner_key_id
      WHERE t.id = ? AND k.hash = ? AND k.revoked_at IS NULL`);
    this.getStmt = db.prepare('SELECT * FROM tasks WHERE id = ?');
    this.getOwnedStmt = db.prepare('SELECT * FROM tasks WHERE id = ? AND owner_key_id = ?');
    this.renewStmt = db.prepare(`UPDATE tasks SET lease_expires_at = ?, updated_at = ?
      WHERE id = ? AND status = 'processing' AND lease_owner = ?`);
    this.progressStmt = db.prepare(`UPDATE tasks SET progress = MAX(progress, ?), updated_at = ?
      WHERE id = ? AND status = 'processing' AND lease_owner = ?`);
    this.lapsedStmt = db.prepare(`SELECT * FROM tasks WHERE status = 'processing' AND lease_expires_at < ?
      ORDER BY lease_expires_at LIMIT ?`);
    this.expiredStmt = db.prepare(`SELECT * FROM tasks WHERE expires_at IS NOT NULL AND expires_at < ?
      ORDER BY expires_at LIMIT ?`);
    this.queuedBeforeStmt = db.prepare("SELECT * FROM tasks WHERE status = 'queued' AND created_at < ? ORDER BY created_at LIMIT ?");
    this.deleteStmt = db.prepare('DELETE FROM tasks WHERE id = ?');
    this.inFlightStmt = db
      .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM tasks WHERE owner_key_id = ?
      AND status IN ('queued', 'processing') LIMIT ?)`)
      .pluck();
  }

  async insertWithinBound(tasks: readonly NewTask[], bounds: InsertBounds): Promise<Array<TaskRecord | InsertRefusal>> {
    const refusals = this.insertBatch(tasks, bounds);
    return tasks.map((t, i) => refusals[i] ?? insertedRecord(t));
  }

  async getOwnedByKeyHash(id: string, keyHash: string, now = Date.now()): Promise<TaskRecord | undefined> {
    const live = (e: OwnedTaskEntry): TaskRecord | undefined => (e.keyExpiresAt === null || e.keyExpiresAt > now ? e.task : undefined);
    const hit = this.polls.get(id);
    if (hit?.keyHash === keyHash) return live(hit);
    const row = this.getByKeyHashStmt.get(id, keyHash) as (TaskRow & { key_expires_at: number | null }) | undefined;
    if (!row) return undefined;
    const entry: OwnedTaskEntry = { keyHash, task: toRecord(row), keyExpiresAt: row.key_expires_at };
    this.polls.set(id, entry);
    return live(entry);
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const row = this.getStmt.get(id) as TaskRow | undefined;
    return row && toRecord(row);
  }

  async getOwned(id: string, ownerKeyId: string): Promise<TaskRecord | undefined> {
    const row = this.getOwnedStmt.get(id, ownerKeyId) as TaskRow | undefined;
    return row && toRecord(row);
  }

  async listTasks(query: TaskListQuery): Promise<TaskRecord[]> {
    const { shape, text, values } = taskListSql(query, () => '?');
    let stmt = this.listCache.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.listCache.set(shape, stmt);
    }
    return (stmt.all(...values) as TaskRow[]).map(toRecord);
  }

  async updateIf(id: string, guard: TaskGuard, patch: TaskPatchWithNote, settle?: Settlement): Promise<TaskRecord | undefined> {
    const keys = (Object.keys(patch) as (keyof TaskPatchWithNote)[]).filter((k) => patch[k] !== undefined);
    const cacheKey = `${keys.join(',')}|${guard.statusIn.length}|${guard.leaseOwner !== undefined}|${guard.leaseExpiredBefore !== undefined}|${guard.unleased === true}|${guard.upstreamId !== undefined}`;
    let stmt = this.updateCache.get(cacheKey);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = ?`).concat('updated_at = ?');
      const where = [`id = ?`, `status IN (${placeholders(guard.statusIn.length)})`];
      if (guard.leaseOwner !== undefined) where.push('lease_owner = ?');
      if (guard.leaseExpiredBefore !== undefined) where.push('lease_expires_at < ?');
      if (guard.unleased) where.push('lease_owner IS NULL');
      if (guard.upstreamId !== undefined) where.push("json_extract(upstream, '$.ref.id') = ?");
      stmt = this.db.prepare(`UPDATE tasks SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`);
      this.updateCache.set(cacheKey, stmt);
    }
    const values = keys.map((k) => columnValue(patch, k));
    const params = [...values, Date.now(), id, ...guard.statusIn];
    if (guard.leaseOwner !== undefined) params.push(guard.leaseOwner);
    if (guard.leaseExpiredBefore !== undefined) params.push(guard.leaseExpiredBefore);
    if (guard.upstreamId !== undefined) params.push(guard.upstreamId);
    const row = settle ? this.settleUpdate(stmt, params, settle) : (stmt.get(...params) as TaskRow | undefined);
    if (!row) return undefined;
    this.changed(id);
    return toRecord(row);
  }

  async claimNext(providers: readonly string[], workerId: string, now: number, leaseUntil: number): Promise<TaskRecord | undefined> {
    if (providers.length === 0) return undefined;
    let claim = this.claimCache.get(providers.length);
    if (!claim) {
      const check = this.db.prepare(CLAIM_SQL.check(providers.length));
      const stmt = this.db.prepare(CLAIM_SQL.start(providers.length));
      // the clock moves to the turn of the claimed task: keys that join later queue behind it, not behind the backlog
      const advance = this.db.prepare('UPDATE fair_clock SET vtime = MAX(vtime, ?) WHERE id = 1');
      claim = this.db.transaction((workerId: unknown, leaseUntil: unknown, now: unknown, ...ids: unknown[]) => {
        const due = check.get(workerId, leaseUntil, now, ...ids, now) as TaskRow | undefined;
        if (due) return due;
        const row = stmt.get(workerId, leaseUntil, now, now, ...ids, now) as TaskRow | undefined;
        if (row) advance.run(row.vtime);
        return row;
      });
      this.claimCache.set(providers.length, claim);
    }
    const row = claim.immediate(workerId, leaseUntil, now, ...providers);
    if (!row) return undefined;
    this.changed(row.id);
    return toRecord(row);
  }

  async renewLease(id: string, workerId: string, leaseUntil: number): Promise<boolean> {
    return this.changedIf(id, this.renewStmt.run(leaseUntil, Date.now(), id, workerId).changes === 1);
  }

  async setProgress(id: string, workerId: string, progress: number): Promise<boolean> {
    return this.changedIf(id, this.progressStmt.run(progress, Date.now(), id, workerId).changes === 1);
  }

  async listLapsedLeases(now: number, limit: number): Promise<TaskRecord[]> {
    return (this.lapsedStmt.all(now, limit) as TaskRow[]).map(toRecord);
  }

  async listExpired(now: number, limit: number): Promise<TaskRecord[]> {
    return (this.expiredStmt.all(now, limit) as TaskRow[]).map(toRecord);
  }

  async listQueuedBefore(createdBefore: number, limit: number): Promise<TaskRecord[]> {
    return (this.queuedBeforeStmt.all(createdBefore, limit) as TaskRow[]).map(toRecord);
  }

  async nextRunAfter(providers: readonly string[]): Promise<number | undefined> {
    if (providers.length === 0) return undefined;
    let stmt = this.nextRunCache.get(providers.length);
    if (!stmt) {
      stmt = this.db.prepare(nextRunSql(providers.length));
      this.nextRunCache.set(providers.length, stmt);
    }
    const row = stmt.get(...providers.flatMap((p) => [p, p])) as { t: number | null };
    return row.t ?? undefined;
  }

  async clearExpiry(id: string): Promise<void> {
    this.db.prepare('UPDATE tasks SET expires_at = NULL WHERE id = ?').run(id);
    this.changed(id);
  }

  async delete(id: string): Promise<boolean> {
    return this.changedIf(id, this.deleteStmt.run(id).changes === 1);
  }

  watchChanges(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  changedElsewhere(): boolean {
    return this.others.changedElsewhere();
  }

  /** A task was written through this connection: drop its cached read, tell the watchers. */
  private changed(id: string): void {
    this.polls.forget(id);
    for (const listener of this.listeners) listener(id);
  }

  private changedIf(id: string, wrote: boolean): boolean {
    if (wrote) this.changed(id);
    return wrote;
  }

  async countInFlight(ownerKeyId: string, upTo: number): Promise<number> {
    return this.inFlightStmt.get(ownerKeyId, upTo) as number;
  }

  /** Not in the contract (G394): the tests count every row with it (test/helpers/task-rows.ts). */
  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const counts: Record<TaskStatus, number> = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const row of this.db.prepare('SELECT status, COUNT(*) AS n FROM tasks GROUP BY status').all() as { status: TaskStatus; n: number }[]) {
      counts[row.status] = row.n;
    }
    return counts;
  }

  async liveCounts(): Promise<LiveTaskCount[]> {
    return (
      this.db.prepare(LIVE_COUNTS_SQL).all() as Array<{ family: FamilyId; model: string; status: LiveTaskCount['status']; n: number; oldest: number }>
    ).map((r) => ({ family: r.family, model: r.model, status: r.status, count: r.n, oldestCreatedAt: r.oldest }));
  }
}
