import type Database from 'better-sqlite3';

/**
 * Tells whether another connection (another process, the CLI) committed since the last call:
 * SQLite's `PRAGMA data_version` changes exactly then (this connection's own commits leave it).
 * One instance per observer: each keeps the version it saw last.
 */
export class DataVersionWatch {
  private readonly stmt: Database.Statement;
  private seen: number;

  constructor(db: Database.Database) {
    this.stmt = db.prepare('PRAGMA data_version').pluck();
    this.seen = this.stmt.get() as number;
  }

  /** True when another connection committed since the previous call (or since construction). */
  changedElsewhere(): boolean {
    const now = this.stmt.get() as number;
    if (now === this.seen) return false;
    this.seen = now;
    return true;
  }
}
