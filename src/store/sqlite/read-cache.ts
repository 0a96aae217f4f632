import type Database from 'better-sqlite3';
import { DataVersionWatch } from './data-version.js';

/**
 * A cache of hot reads (the poll path's task-by-key-hash, the submit path's key-by-hash) that is
 * never stale:
 * - a write through this connection drops the entries it touches (`forget`) or all (`clear`);
 * - a commit by any other connection (another process, the CLI) changes SQLite's
 *   `PRAGMA data_version`, which drops every entry. It is read at the first lookup of each
 *   event-loop turn: every request handled in a turn arrived before the turn began, so a commit
 *   its client saw finish (a `keys revoke` that exited, a worker's completion) is seen. Reading it
 *   once per turn rather than per lookup matters: under load it costs about as much as the read
 *   it saves.
 * The version is read before the rows it guards, so a commit in between only makes an entry
 * look older than it is (dropped at the next check), never newer.
 */
export class SqliteReadCache<V> {
  private readonly others: DataVersionWatch;
  private readonly entries = new Map<string, V>();
  /** True from the first lookup of an event-loop turn until the turn ends. */
  private checkedThisTurn = false;
  private readonly endTurn = (): void => {
    this.checkedThisTurn = false;
  };

  constructor(
    db: Database.Database,
    private readonly maxEntries = 10_000,
  ) {
    this.others = new DataVersionWatch(db);
  }

  /** The cached value, after dropping everything if another connection committed before this turn. */
  get(key: string): V | undefined {
    if (!this.checkedThisTurn) {
      this.checkedThisTurn = true;
      setImmediate(this.endTurn);
      if (this.others.changedElsewhere()) {
        this.entries.clear();
        return undefined;
      }
    }
    return this.entries.get(key);
  }

  /** Caches a value read after a `get` of the same key (which checked the version). */
  set(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
