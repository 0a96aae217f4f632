/** The `api_keys` table's row shape (without the hash) and its mapping to records, shared by the SQLite and PostgreSQL stores. */
import type { ApiKeyRecord } from './types.js';

export interface KeyRow { id: string; name: string; prefix: string; created_at: number; revoked_at: number | null; submit_rate: number | null; query_rate: number | null }

/** The columns a {@link KeyRow} is read from. */
export const KEY_COLUMNS = 'id, name, prefix, created_at, revoked_at, submit_rate, query_rate';

export const keyOfRow = (r: KeyRow): ApiKeyRecord => ({
  id: r.id, name: r.name, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at,
  submitRate: r.submit_rate, queryRate: r.query_rate,
});
