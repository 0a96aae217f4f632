import type Database from 'better-sqlite3';
import type { SessionRecord, SessionStore } from '../types.js';

interface SessionRow {
  id_hash: string;
  key_hash: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

const ofRow = (r: SessionRow): SessionRecord => ({
  idHash: r.id_hash,
  keyHash: r.key_hash,
  csrfToken: r.csrf_token,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** SQLite console sessions (G361). */
export class SqliteSessionStore implements SessionStore {
  private readonly insertStmt: Database.Statement;
  private readonly findStmt: Database.Statement;
  private readonly deleteStmt: Database.Statement;
  private readonly expireStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.insertStmt = db.prepare('INSERT INTO console_sessions (id_hash, key_hash, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.findStmt = db.prepare('SELECT * FROM console_sessions WHERE id_hash = ?');
    this.deleteStmt = db.prepare('DELETE FROM console_sessions WHERE id_hash = ?');
    this.expireStmt = db.prepare('DELETE FROM console_sessions WHERE expires_at < ?');
  }

  async insert(s: SessionRecord): Promise<void> {
    this.insertStmt.run(s.idHash, s.keyHash, s.csrfToken, s.createdAt, s.expiresAt);
  }

  async find(idHash: string): Promise<SessionRecord | undefined> {
    const row = this.findStmt.get(idHash) as SessionRow | undefined;
    return row && ofRow(row);
  }

  async delete(idHash: string): Promise<boolean> {
    return this.deleteStmt.run(idHash).changes > 0;
  }

  async deleteExpired(now: number): Promise<number> {
    return this.expireStmt.run(now).changes;
  }
}
