/**
 * An independent record of every time a task of a PostgreSQL store reaches a terminal status: a
 * trigger the test installs on `tasks` logs each write that turns a row `completed`, `failed` or
 * `cancelled` (a row inserted so, a status change into one, or a terminal row written again with
 * another status or result) into a side table, with the lease owner the row had just before, i.e.
 * the worker that finished it. Whatever the gateway logs or answers, a task finished twice shows
 * here as two rows. Test-only: the gateway never reads the side table.
 */
import pg from 'pg';

export interface TerminalWrite {
  seq: number;
  taskId: string;
  status: string;
  fromStatus: string | null;
  /** The row's lease owner before the write (`<host>:<pid>:<random>`: the worker that held it), or null. */
  leaseOwner: string | null;
}

const INSTALL = `
CREATE TABLE test_terminal_log (
  seq         bigserial PRIMARY KEY,
  task_id     text NOT NULL,
  status      text NOT NULL,
  from_status text,
  lease_owner text
);
CREATE FUNCTION test_log_terminal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status NOT IN ('completed', 'failed', 'cancelled') THEN RETURN NULL; END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO test_terminal_log (task_id, status) VALUES (NEW.id, NEW.status);
  ELSIF OLD.status IS DISTINCT FROM NEW.status OR OLD.result IS DISTINCT FROM NEW.result THEN
    INSERT INTO test_terminal_log (task_id, status, from_status, lease_owner) VALUES (NEW.id, NEW.status, OLD.status, OLD.lease_owner);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER test_log_terminal AFTER INSERT OR UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION test_log_terminal();
`;

/** Installs the trigger on the (already migrated) database at `url`; `writes()` reads what it logged, in order. */
export async function installTerminalLog(url: string): Promise<{ writes(): Promise<TerminalWrite[]>; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined); // an idle connection cut by a fault test is dropped, not the test process's end
  try {
    await pool.query(INSTALL);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    async writes() {
      const { rows } = await pool.query<{ seq: string; task_id: string; status: string; from_status: string | null; lease_owner: string | null }>(
        'SELECT seq, task_id, status, from_status, lease_owner FROM test_terminal_log ORDER BY seq',
      );
      return rows.map((r) => ({ seq: Number(r.seq), taskId: r.task_id, status: r.status, fromStatus: r.from_status, leaseOwner: r.lease_owner }));
    },
    close: () => pool.end(),
  };
}
