import type Database from 'better-sqlite3';
import { auditInsert, auditListSql, auditOfRow, type AuditRow } from '../audit-rows.js';
import type { AuditEntry, AuditQuery, AuditStore, NewAuditEntry } from '../types.js';

/** Appends one audit entry (G302); call inside the change's own transaction. */
export function appendAudit(db: Database.Database, entry: NewAuditEntry): void {
  const { text, values } = auditInsert(entry, 'sqlite');
  db.prepare(text).run(...values);
}

/** SQLite audit log reads (G302). */
export class SqliteAuditStore implements AuditStore {
  private readonly listCache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { shape, text, values } = auditListSql(query, 'sqlite');
    let stmt = this.listCache.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.listCache.set(shape, stmt);
    }
    return (stmt.all(...values) as AuditRow[]).map(auditOfRow);
  }

  async append(entry: NewAuditEntry): Promise<void> {
    appendAudit(this.db, entry);
  }
}
