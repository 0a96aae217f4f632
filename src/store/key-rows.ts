/** The `api_keys` table's row shape (without the hash) and its mapping to records, shared by the SQLite and PostgreSQL stores. */
import type { ApiKeyRecord } from './types.js';

export interface KeyRow { id: string; name: string; prefix: string; created_at: number; revoked_at: number | null; submit_rate: number | null; query_rate: number | null; account_id: string; spend_cap_micro: number | null; webhook_url: string | null }

/** The columns a {@link KeyRow} is read from. */
export const KEY_COLUMNS = 'id, name, prefix, created_at, revoked_at, submit_rate, query_rate, account_id, spend_cap_micro, webhook_url';

export const keyOfRow = (r: KeyRow): ApiKeyRecord => ({
  id: r.id, name: r.name, accountId: r.account_id, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at,
  submitRate: r.submit_rate, queryRate: r.query_rate, spendCapMicro: r.spend_cap_micro === null ? null : Number(r.spend_cap_micro),
  webhookUrl: r.webhook_url ?? null,
});
