import type pg from 'pg';
import type { SessionRecord, SessionStore } from '../types.js';

interface SessionRow {
  id_hash: string;
  key_hash: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

const ofRow = (r: SessionRow): SessionRecord => ({
  idHash: r.id_hash,
  keyHash: r.key_hash,
  csrfToken: r.csrf_token,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** PostgreSQL console sessions (G361): every process of a cluster reads the same ones. */
export class PostgresSessionStore implements SessionStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(s: SessionRecord): Promise<void> {
    await this.pool.query({
      name: 'mg_session_insert',
      text: 'INSERT INTO console_sessions (id_hash, key_hash, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      values: [s.idHash, s.keyHash, s.csrfToken, s.createdAt, s.expiresAt],
    });
  }

  async find(idHash: string): Promise<SessionRecord | undefined> {
    const { rows } = await this.pool.query<SessionRow>({
      name: 'mg_session_find',
      text: 'SELECT * FROM console_sessions WHERE id_hash = $1',
      values: [idHash],
    });
    return rows[0] && ofRow(rows[0]);
  }

  async delete(idHash: string): Promise<boolean> {
    const { rowCount } = await this.pool.query({ name: 'mg_session_delete', text: 'DELETE FROM console_sessions WHERE id_hash = $1', values: [idHash] });
    return (rowCount ?? 0) > 0;
  }

  async deleteExpired(now: number): Promise<number> {
    const { rowCount } = await this.pool.query({ name: 'mg_session_expire', text: 'DELETE FROM console_sessions WHERE expires_at < $1', values: [now] });
    return rowCount ?? 0;
  }
}
