import type Database from 'better-sqlite3';
import type { WorkerBeat, WorkerStore } from '../types.js';

/** Worker heartbeats in SQLite (G264): the processes of one machine sharing the file. */
export class SqliteWorkerStore implements WorkerStore {
  private readonly upsert: Database.Statement;
  private readonly forget: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly live: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.upsert = db.prepare(
      'INSERT INTO worker_beats (id, role, seen_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET role = excluded.role, seen_at = excluded.seen_at',
    );
    this.forget = db.prepare('DELETE FROM worker_beats WHERE seen_at < ?');
    this.remove = db.prepare('DELETE FROM worker_beats WHERE id = ?');
    this.live = db.prepare('SELECT role, COUNT(*) AS n FROM worker_beats WHERE seen_at >= ? GROUP BY role ORDER BY role');
  }

  async beat(worker: WorkerBeat, now: number, forgetBefore: number): Promise<void> {
    this.db.transaction(() => {
      this.upsert.run(worker.id, worker.role, now);
      this.forget.run(forgetBefore);
    })();
  }

  async leave(id: string): Promise<void> {
    this.remove.run(id);
  }

  async liveByRole(since: number): Promise<Array<{ role: string; count: number }>> {
    return (this.live.all(since) as Array<{ role: string; n: number }>).map((r) => ({ role: r.role, count: r.n }));
  }
}
