import type pg from 'pg';
import { isQueryTimeout } from './connect.js';

/**
 * Runs `fn` in a transaction on one pooled connection; rolled back when it throws. A connection
 * whose rollback failed, or whose statement went past the query bound, is dropped from the pool
 * rather than handed back.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // a statement past the query bound leaves the connection waiting on its answer: a ROLLBACK
      // would wait behind it (a second bound); the connection is dropped, which ends the transaction (G451)
      if (isQueryTimeout(err)) broken = err as Error;
      else
        await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
          broken = rollbackErr as Error;
        });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
