import type pg from 'pg';

/**
 * Runs `fn` in a transaction on one pooled connection; rolled back when it throws. A connection
 * whose rollback failed is dropped from the pool rather than handed back.
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
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
        broken = rollbackErr as Error;
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
