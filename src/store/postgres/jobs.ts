import type pg from 'pg';

/**
 * Runs `fn` while holding the session-level advisory lock named for the job, taken with
 * `pg_try_advisory_lock` on a pooled connection kept for the run: a process that finds the lock
 * held skips the run (false). The lock goes with the session, so a process that dies mid-run frees
 * it for the next run elsewhere (G184).
 */
export async function runAlone(pool: pg.Pool, name: string, fn: () => Promise<void>): Promise<boolean> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const { rows } = await client.query<{ got: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('mediagate job ' || $1, 0)) AS got`, [name]);
    if (!rows[0]?.got) return false;
    try {
      await fn();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtextextended('mediagate job ' || $1, 0))`, [name]).catch((err: unknown) => {
        broken = err instanceof Error ? err : new Error(String(err));
      });
    }
    return true;
  } finally {
    client.release(broken); // a session that may still hold the lock is closed, not reused
  }
}
