import type pg from 'pg';
import { idempotencyTaskKey, type IdempotencyBegin, type IdempotencyStore } from '../types.js';
import { inTransaction } from './transaction.js';

interface Row {
  fingerprint: string;
  status_code: number | null;
  response: string | null;
  created_at: number;
}

/**
 * PostgreSQL Idempotency-Key records. `begin` reads the record with `FOR UPDATE` and decides in the
 * same transaction; when there is none yet, two processes may race to create it: the loser's
 * `ON CONFLICT DO NOTHING` inserts nothing, and it reads again, now waiting on the winner's row.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: pg.Pool) {}

  async begin(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number, expiredBefore: number): Promise<IdempotencyBegin> {
    return inTransaction(this.pool, async (client): Promise<IdempotencyBegin> => {
      for (;;) {
        const { rows } = await client.query<Row>({
          name: 'mg_idem_lock',
          text: 'SELECT fingerprint, status_code, response, created_at FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2 FOR UPDATE',
          values: [keyId, idemKey],
        });
        const row = rows[0];
        if (!row) {
          const inserted = await client.query({
            name: 'mg_idem_insert',
            text: `INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, status_code, response, created_at)
              VALUES ($1, $2, $3, NULL, NULL, $4) ON CONFLICT (key_id, idem_key) DO NOTHING`,
            values: [keyId, idemKey, fingerprint, now],
          });
          if (inserted.rowCount === 1) return { state: 'new' };
          continue; // another request claimed it meanwhile: read its claim
        }
        if (row.created_at >= expiredBefore) {
          const mine = row.fingerprint === fingerprint;
          if (row.response !== null && row.status_code !== null)
            return mine ? { state: 'replay', statusCode: row.status_code, response: row.response } : { state: 'mismatch' };
          // did its request commit a task (and then die, or answer an error, G266)?
          const task = await client.query<{ id: string }>({
            name: 'mg_idem_task',
            text: 'SELECT id FROM tasks WHERE idempotency_key = $1',
            values: [idempotencyTaskKey(keyId, idemKey, row.created_at)],
          });
          const taskId = task.rows[0]?.id;
          if (taskId !== undefined) return mine ? { state: 'recovered', taskId } : { state: 'mismatch' };
          if (row.created_at >= staleBefore) return mine ? { state: 'in_progress' } : { state: 'mismatch' };
        }
        await client.query({
          name: 'mg_idem_reclaim',
          text: `UPDATE idempotency_keys SET fingerprint = $3, status_code = NULL, response = NULL, created_at = $4 WHERE key_id = $1 AND idem_key = $2`,
          values: [keyId, idemKey, fingerprint, now],
        });
        return { state: 'new' };
      }
    });
  }

  async complete(keyId: string, idemKey: string, statusCode: number, response: string): Promise<void> {
    await this.pool.query({
      name: 'mg_idem_complete',
      text: 'UPDATE idempotency_keys SET status_code = $1, response = $2 WHERE key_id = $3 AND idem_key = $4',
      values: [statusCode, response, keyId, idemKey],
    });
  }

  async abandon(keyId: string, idemKey: string): Promise<void> {
    await this.pool.query({
      // a claim whose request committed its task stays, to be recovered (G266)
      name: 'mg_idem_abandon',
      text: `DELETE FROM idempotency_keys AS k WHERE key_id = $1 AND idem_key = $2 AND response IS NULL
        AND NOT EXISTS (SELECT 1 FROM tasks WHERE idempotency_key = k.key_id || ':' || k.created_at::text || ':' || k.idem_key)`,
      values: [keyId, idemKey],
    });
  }

  async purge(before: number): Promise<number> {
    const { rowCount } = await this.pool.query({ name: 'mg_idem_purge', text: 'DELETE FROM idempotency_keys WHERE created_at < $1', values: [before] });
    return rowCount ?? 0;
  }
}
