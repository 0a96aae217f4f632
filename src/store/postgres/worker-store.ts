import type pg from 'pg';
import type { WorkerBeat, WorkerStore } from '../types.js';

/** Worker heartbeats in PostgreSQL (G264): every process of the cluster that runs tasks. */
export class PostgresWorkerStore implements WorkerStore {
  constructor(private readonly pool: pg.Pool) {}

  async beat(worker: WorkerBeat, now: number, forgetBefore: number): Promise<void> {
    // one statement: the refresh, and the rows of workers long gone removed
    await this.pool.query({
      name: 'mg_worker_beat',
      text: `WITH gone AS (DELETE FROM worker_beats WHERE seen_at < $4 AND id <> $1)
        INSERT INTO worker_beats (id, role, seen_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET role = EXCLUDED.role, seen_at = EXCLUDED.seen_at`,
      values: [worker.id, worker.role, now, forgetBefore],
    });
  }

  async leave(id: string): Promise<void> {
    await this.pool.query({ name: 'mg_worker_leave', text: 'DELETE FROM worker_beats WHERE id = $1', values: [id] });
  }

  async liveByRole(since: number): Promise<Array<{ role: string; count: number }>> {
    const { rows } = await this.pool.query<{ role: string; n: number }>({
      name: 'mg_worker_live',
      text: 'SELECT role, COUNT(*)::int AS n FROM worker_beats WHERE seen_at >= $1 GROUP BY role ORDER BY role',
      values: [since],
    });
    return rows.map((r) => ({ role: r.role, count: r.n }));
  }
}
