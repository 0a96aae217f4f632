import type pg from 'pg';

/** The channel every task write is announced on: `<store instance> <task id>` (see the trigger below). */
export const TASKS_CHANNEL = 'mediagate_tasks';
/** The channel announcing work a worker may claim now: the provider's id. */
export const QUEUE_CHANNEL = 'mediagate_queue';
/** The channel announcing a task just cancelled: its id. */
export const CANCEL_CHANNEL = 'mediagate_cancels';

/**
 * Ordered schema steps, each applied once in its own transaction and recorded in
 * `schema_migrations`. The schema is the SQLite one (sqlite/migrations.ts) in PostgreSQL's types:
 * times are `bigint` Unix ms, JSON documents (`request`, `result`, `upstream`) are `text` exactly
 * as written (jsonb would refuse some strings JSON allows, such as `\u0000`), and the upstream
 * reference id a guard compares is a column of its own.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE api_keys (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    prefix      text NOT NULL,
    hash        text NOT NULL UNIQUE,
    created_at  bigint NOT NULL,
    revoked_at  bigint,
    submit_rate integer,
    query_rate  integer
  );
  CREATE TABLE tasks (
    id               text PRIMARY KEY,
    owner_key_id     text NOT NULL,
    family           text NOT NULL,
    form             text,
    model            text NOT NULL,
    provider         text NOT NULL,
    request          text NOT NULL,
    status           text NOT NULL,
    progress         integer NOT NULL DEFAULT 0,
    result           text,
    error            text,
    amount           double precision NOT NULL DEFAULT 0,
    created_at       bigint NOT NULL,
    updated_at       bigint NOT NULL,
    started_at       bigint,
    finished_at      bigint,
    attempts         integer NOT NULL DEFAULT 0,
    server_faults    integer NOT NULL DEFAULT 0,
    lease_owner      text,
    lease_expires_at bigint,
    run_after        bigint NOT NULL DEFAULT 0,
    expires_at       bigint,
    idempotency_key  text,
    vtime            bigint NOT NULL DEFAULT 0,
    upstream         text,
    upstream_ref_id  text
  );
  -- claims: queued tasks in fair order, due checks (G85, G86)
  CREATE INDEX tasks_fair_queue ON tasks (provider, vtime, created_at) WHERE status = 'queued';
  CREATE INDEX tasks_queue ON tasks (provider, run_after) WHERE status = 'queued';
  CREATE INDEX tasks_checks ON tasks (provider, run_after) WHERE status = 'processing' AND lease_owner IS NULL;
  CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'processing';
  CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
  -- owner lookups: in-flight counts, idempotency recovery
  CREATE INDEX tasks_in_flight ON tasks (owner_key_id) WHERE status IN ('queued', 'processing');
  CREATE INDEX tasks_idempotency ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE TABLE fair_keys (key_id text PRIMARY KEY, last_vtime bigint NOT NULL);
  CREATE TABLE fair_clock (id integer PRIMARY KEY CHECK (id = 1), vtime bigint NOT NULL);
  INSERT INTO fair_clock (id, vtime) VALUES (1, 0);

  CREATE TABLE chat_usage (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key_id            text NOT NULL,
    model             text NOT NULL,
    request_id        text NOT NULL,
    prompt_tokens     integer NOT NULL,
    completion_tokens integer NOT NULL,
    created_at        bigint NOT NULL
  );
  CREATE INDEX chat_usage_key ON chat_usage (key_id, created_at);

  CREATE TABLE assets (
    id           text PRIMARY KEY,
    owner_key_id text NOT NULL,
    status       text NOT NULL,
    reason       text,
    kind         text,
    format       text,
    width        integer,
    height       integer,
    duration     double precision,
    fps          double precision,
    bytes        bigint NOT NULL,
    file         text,
    created_at   bigint NOT NULL,
    expires_at   bigint NOT NULL
  );
  CREATE INDEX assets_owner ON assets (owner_key_id, expires_at) WHERE status = 'approved';
  CREATE INDEX assets_expiry ON assets (expires_at);

  CREATE TABLE idempotency_keys (
    key_id       text NOT NULL,
    idem_key     text NOT NULL,
    fingerprint  text NOT NULL,
    status_code  integer,
    response     text,
    created_at   bigint NOT NULL,
    PRIMARY KEY (key_id, idem_key)
  );
  CREATE INDEX idempotency_created ON idempotency_keys (created_at);
  `,
  // Cross-process signals (G183): every committed task write is announced, whoever made it (a
  // gateway, the CLI, psql); so is every task a worker may claim now (queued, or a check waiting),
  // and every task cancelled.
  `
  CREATE FUNCTION mediagate_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      PERFORM pg_notify('${TASKS_CHANNEL}', COALESCE(current_setting('mediagate.instance', true), '-') || ' ' || OLD.id);
      RETURN NULL;
    END IF;
    PERFORM pg_notify('${TASKS_CHANNEL}', COALESCE(current_setting('mediagate.instance', true), '-') || ' ' || NEW.id);
    IF NEW.status = 'queued' OR (NEW.status = 'processing' AND NEW.lease_owner IS NULL) THEN
      PERFORM pg_notify('${QUEUE_CHANNEL}', NEW.provider);
    END IF;
    IF NEW.status = 'cancelled' AND (TG_OP = 'INSERT' OR OLD.status <> 'cancelled') THEN
      PERFORM pg_notify('${CANCEL_CHANNEL}', NEW.id);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION mediagate_task_notify();
  `,
];

/** The schema version the migrations lead to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The advisory lock held while migrating: one process migrates, the others wait and then find nothing to do. */
const MIGRATION_LOCK = 0x6d67_6d69_67; // "mgmig"

/**
 * Applies the migrations the database lacks. Processes started together serialise on a
 * session-level advisory lock (`pg_advisory_lock`), taken before anything is read; each migration
 * commits with its `schema_migrations` row, so a crash leaves either the step and its row or neither.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)');
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      for (let version = current + 1; version <= MIGRATIONS.length; version++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[version - 1]!);
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err)); // do not hand back a session that may hold the lock
    throw err;
  } finally {
    client.release(broken);
  }
}
