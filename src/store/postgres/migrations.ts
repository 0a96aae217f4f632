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
  // Limits shared by every process (G196-G197): rate-limit counts (rate-limiter-flexible's table
  // layout) and long-poll slots. Both are short-lived counts: UNLOGGED (no WAL; emptied if the
  // server crashes, which only forgives a few seconds of counting).
  `
  CREATE UNLOGGED TABLE rate_limits (
    key     varchar(255) PRIMARY KEY,
    points  integer NOT NULL DEFAULT 0,
    expire  bigint
  );
  CREATE UNLOGGED TABLE wait_slots (
    id          text PRIMARY KEY,
    key_id      text NOT NULL,
    expires_at  bigint NOT NULL
  );
  CREATE INDEX wait_slots_key ON wait_slots (key_id, expires_at);
  -- One long-poll slot of p_key, unless p_max are held (slots past their end are dropped first).
  -- The advisory lock serialises takers of one key; the count after it sees every committed slot
  -- (each statement of a VOLATILE function reads a fresh snapshot under READ COMMITTED).
  CREATE FUNCTION mediagate_take_wait_slot(p_id text, p_key text, p_until bigint, p_now bigint, p_max integer)
    RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('mediagate_wait_slots:' || p_key, 0));
    DELETE FROM wait_slots WHERE key_id = p_key AND expires_at <= p_now;
    IF (SELECT count(*) FROM wait_slots WHERE key_id = p_key) >= p_max THEN
      RETURN false;
    END IF;
    INSERT INTO wait_slots (id, key_id, expires_at) VALUES (p_id, p_key, p_until);
    RETURN true;
  END $$;
  `,
  // Credits (G200-G205): accounts own keys; the ledger is append-only (the trigger refuses changes)
  // and each hold is settled at most once (the unique indexes); every existing key gets an account.
  `
  CREATE TABLE accounts (
    id              text PRIMARY KEY,
    name            text NOT NULL,
    created_at      bigint NOT NULL,
    available_micro bigint NOT NULL DEFAULT 0,
    held_micro      bigint NOT NULL DEFAULT 0,
    spent_micro     bigint NOT NULL DEFAULT 0
  );
  CREATE TABLE ledger (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('grant', 'hold', 'capture', 'release', 'adjust')),
    amount_micro  bigint NOT NULL,
    settled_micro bigint,
    key_id        text,
    task_id       text,
    request_id    text,
    model         text,
    note          text,
    created_at    bigint NOT NULL
  );
  CREATE INDEX ledger_account ON ledger (account_id, id);
  CREATE INDEX ledger_settled ON ledger (account_id, created_at) WHERE kind IN ('capture', 'release');
  CREATE UNIQUE INDEX ledger_task_hold ON ledger (task_id) WHERE kind = 'hold' AND task_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_task_settled ON ledger (task_id) WHERE kind IN ('capture', 'release') AND task_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_request_hold ON ledger (request_id) WHERE kind = 'hold' AND request_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_request_settled ON ledger (request_id) WHERE kind IN ('capture', 'release') AND request_id IS NOT NULL;
  CREATE INDEX ledger_request_holds ON ledger (created_at) WHERE kind = 'hold' AND request_id IS NOT NULL;
  CREATE FUNCTION mediagate_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the ledger is append-only';
  END $$;
  CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger
    FOR EACH STATEMENT EXECUTE FUNCTION mediagate_ledger_append_only();
  ALTER TABLE api_keys ADD COLUMN account_id text;
  ALTER TABLE api_keys ADD COLUMN spend_cap_micro bigint;
  ALTER TABLE api_keys ADD COLUMN held_micro bigint NOT NULL DEFAULT 0;
  ALTER TABLE api_keys ADD COLUMN spent_micro bigint NOT NULL DEFAULT 0;
  INSERT INTO accounts (id, name, created_at) SELECT 'acct_' || substr(id, 5), name, created_at FROM api_keys;
  UPDATE api_keys SET account_id = 'acct_' || substr(id, 5);
  ALTER TABLE tasks ADD COLUMN account_id text;
  ALTER TABLE tasks ADD COLUMN hold_micro bigint;
  ALTER TABLE tasks ADD COLUMN per_second_micro bigint;
  `,
  // The task list (G216): a key's tasks newest first, read backwards from a (created_at, id) position.
  `
  CREATE INDEX tasks_owner_created ON tasks (owner_key_id, created_at, id);
  `,
  // Caller webhooks (G208-G215): the URL in force kept with the task, the key's default URL and
  // signing secrets, and the outbox, written with the terminal transition and deleted with its task.
  `
  ALTER TABLE tasks ADD COLUMN callback_url text;
  ALTER TABLE api_keys ADD COLUMN webhook_url text;
  ALTER TABLE api_keys ADD COLUMN webhook_secret text;
  ALTER TABLE api_keys ADD COLUMN webhook_secret_previous text;
  ALTER TABLE api_keys ADD COLUMN webhook_secret_rotated_at bigint;
  CREATE TABLE webhook_deliveries (
    id              text PRIMARY KEY,
    task_id         text NOT NULL UNIQUE REFERENCES tasks (id) ON DELETE CASCADE,
    owner_key_id    text NOT NULL,
    url             text NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    body            text,
    attempts        text NOT NULL DEFAULT '[]',
    attempt_count   integer NOT NULL DEFAULT 0,
    next_attempt_at bigint,
    lease_owner     text,
    created_at      bigint NOT NULL
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
  `,
  // The queue TTL (G249): queued tasks by age.
  `
  CREATE INDEX tasks_queued_created ON tasks (created_at) WHERE status = 'queued';
  `,
  // The admin API (G300-G310): key roles, model allow-lists, expiry and in-flight bounds; secrets a
  // rotation replaced, valid for a grace period; when keys were last used (a table of its own: its
  // batched writes never wait on the rows holds lock); the audit log, append-only like the ledger.
  `
  ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'caller' CHECK (role IN ('caller', 'admin'));
  ALTER TABLE api_keys ADD COLUMN models text;
  ALTER TABLE api_keys ADD COLUMN expires_at bigint;
  ALTER TABLE api_keys ADD COLUMN max_in_flight integer;
  CREATE INDEX api_keys_created ON api_keys (created_at, id);
  CREATE TABLE api_key_grace (
    hash        text PRIMARY KEY,
    key_id      text NOT NULL,
    valid_until bigint NOT NULL
  );
  CREATE INDEX api_key_grace_key ON api_key_grace (key_id);
  CREATE TABLE api_key_usage (
    key_id    text PRIMARY KEY,
    last_used bigint NOT NULL
  );
  CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         bigint NOT NULL,
    actor      text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL,
    request_id text,
    details    text NOT NULL
  );
  CREATE INDEX audit_log_actor ON audit_log (actor, id);
  CREATE INDEX audit_log_target ON audit_log (target, id);
  CREATE INDEX audit_log_at ON audit_log (at);
  CREATE FUNCTION mediagate_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
  END $$;
  CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION mediagate_audit_append_only();
  `,
  // Worker heartbeats (G264): one row per process that runs tasks, refreshed every few seconds.
  `
  CREATE TABLE worker_beats (
    id      text PRIMARY KEY,
    role    text NOT NULL,
    seen_at bigint NOT NULL
  );
  CREATE INDEX worker_beats_seen ON worker_beats (seen_at);
  `,
  // The rest of the admin API (G317-G324): every status change of a task (written by triggers, in
  // the transaction of the change, whichever statement made it); usage aggregates per hour, kept by
  // the same triggers as tasks are submitted and end, as chat replies are recorded and as credits are
  // captured; channels' circuit states and outcomes per minute, shared by every process.
  `
  ALTER TABLE tasks ADD COLUMN attempt_error text;
  CREATE TABLE task_events (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id     text NOT NULL,
    at          bigint NOT NULL,
    from_status text,
    status      text NOT NULL,
    attempt     integer NOT NULL,
    provider    text NOT NULL,
    upstream_id text,
    error       text
  );
  CREATE INDEX task_events_task ON task_events (task_id, id);
  CREATE TABLE usage_hourly (
    hour              bigint NOT NULL,
    model             text NOT NULL,
    key_id            text NOT NULL,
    account_id        text NOT NULL,
    provider          text NOT NULL,
    submitted         bigint NOT NULL DEFAULT 0,
    completed         bigint NOT NULL DEFAULT 0,
    failed            bigint NOT NULL DEFAULT 0,
    cancelled         bigint NOT NULL DEFAULT 0,
    video_seconds     float8 NOT NULL DEFAULT 0,
    images            bigint NOT NULL DEFAULT 0,
    chat_requests     bigint NOT NULL DEFAULT 0,
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    captured_micro    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (hour, model, key_id, account_id, provider)
  );
  CREATE TABLE usage_daily (
    day               bigint NOT NULL,
    model             text NOT NULL,
    key_id            text NOT NULL,
    account_id        text NOT NULL,
    provider          text NOT NULL,
    submitted         bigint NOT NULL DEFAULT 0,
    completed         bigint NOT NULL DEFAULT 0,
    failed            bigint NOT NULL DEFAULT 0,
    cancelled         bigint NOT NULL DEFAULT 0,
    video_seconds     float8 NOT NULL DEFAULT 0,
    images            bigint NOT NULL DEFAULT 0,
    chat_requests     bigint NOT NULL DEFAULT 0,
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    captured_micro    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, model, key_id, account_id, provider)
  );
  CREATE FUNCTION mediagate_task_submitted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO usage_hourly AS u (hour, model, key_id, account_id, provider, submitted)
    VALUES ((NEW.created_at / 3600000) * 3600000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider, 1)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET submitted = u.submitted + 1;
    INSERT INTO usage_daily AS u (day, model, key_id, account_id, provider, submitted)
    VALUES ((NEW.created_at / 86400000) * 86400000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider, 1)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET submitted = u.submitted + 1;
    RETURN NULL;
  END $$;
  CREATE TRIGGER tasks_usage_submitted AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION mediagate_task_submitted();
  CREATE FUNCTION mediagate_task_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    files jsonb;
  BEGIN
    INSERT INTO task_events (task_id, at, from_status, status, attempt, provider, upstream_id, error)
    VALUES (NEW.id, NEW.updated_at, OLD.status, NEW.status, NEW.attempts, NEW.provider, OLD.upstream_ref_id, COALESCE(NEW.error, CASE WHEN NEW.status = 'queued' THEN NEW.attempt_error END));
    IF NEW.status IN ('completed', 'failed', 'cancelled') THEN
      files := CASE WHEN NEW.status = 'completed' AND NEW.result IS NOT NULL THEN COALESCE(NEW.result::jsonb -> 'files', '[]'::jsonb) ELSE '[]'::jsonb END;
      INSERT INTO usage_hourly AS u (hour, model, key_id, account_id, provider, completed, failed, cancelled, video_seconds, images)
      VALUES ((COALESCE(NEW.finished_at, NEW.updated_at) / 3600000) * 3600000, NEW.model, NEW.owner_key_id,
        COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider,
        (NEW.status = 'completed')::int, (NEW.status = 'failed')::int, (NEW.status = 'cancelled')::int,
        CASE WHEN NEW.status = 'completed' THEN COALESCE((NEW.result::jsonb ->> 'actualDuration')::float8,
          (SELECT SUM((f ->> 'duration')::float8) FROM jsonb_array_elements(files) f WHERE f ->> 'contentType' LIKE 'video/%'), 0) ELSE 0 END,
        (SELECT COUNT(*) FROM jsonb_array_elements(files) f WHERE f ->> 'contentType' LIKE 'image/%'))
      ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET completed = u.completed + excluded.completed,
        failed = u.failed + excluded.failed, cancelled = u.cancelled + excluded.cancelled,
        video_seconds = u.video_seconds + excluded.video_seconds, images = u.images + excluded.images;
      INSERT INTO usage_daily AS u (day, model, key_id, account_id, provider, completed, failed, cancelled, video_seconds, images)
      VALUES ((COALESCE(NEW.finished_at, NEW.updated_at) / 86400000) * 86400000, NEW.model, NEW.owner_key_id,
        COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider,
        (NEW.status = 'completed')::int, (NEW.status = 'failed')::int, (NEW.status = 'cancelled')::int,
        CASE WHEN NEW.status = 'completed' THEN COALESCE((NEW.result::jsonb ->> 'actualDuration')::float8,
          (SELECT SUM((f ->> 'duration')::float8) FROM jsonb_array_elements(files) f WHERE f ->> 'contentType' LIKE 'video/%'), 0) ELSE 0 END,
        (SELECT COUNT(*) FROM jsonb_array_elements(files) f WHERE f ->> 'contentType' LIKE 'image/%'))
      ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET completed = u.completed + excluded.completed,
        failed = u.failed + excluded.failed, cancelled = u.cancelled + excluded.cancelled,
        video_seconds = u.video_seconds + excluded.video_seconds, images = u.images + excluded.images;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER tasks_status_events AFTER UPDATE OF status ON tasks FOR EACH ROW
    WHEN (NEW.status IS DISTINCT FROM OLD.status) EXECUTE FUNCTION mediagate_task_status_changed();
  CREATE FUNCTION mediagate_task_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM task_events WHERE task_id = OLD.id;
    RETURN NULL;
  END $$;
  CREATE TRIGGER tasks_events_deleted AFTER DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION mediagate_task_deleted();
  CREATE FUNCTION mediagate_chat_usage_hourly() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO usage_hourly AS u (hour, model, key_id, account_id, provider, chat_requests, prompt_tokens, completion_tokens)
    VALUES ((NEW.created_at / 3600000) * 3600000, NEW.model, NEW.key_id,
      COALESCE((SELECT account_id FROM api_keys WHERE id = NEW.key_id), ''), '', 1, NEW.prompt_tokens, NEW.completion_tokens)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET chat_requests = u.chat_requests + 1,
      prompt_tokens = u.prompt_tokens + excluded.prompt_tokens, completion_tokens = u.completion_tokens + excluded.completion_tokens;
    INSERT INTO usage_daily AS u (day, model, key_id, account_id, provider, chat_requests, prompt_tokens, completion_tokens)
    VALUES ((NEW.created_at / 86400000) * 86400000, NEW.model, NEW.key_id,
      COALESCE((SELECT account_id FROM api_keys WHERE id = NEW.key_id), ''), '', 1, NEW.prompt_tokens, NEW.completion_tokens)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET chat_requests = u.chat_requests + 1,
      prompt_tokens = u.prompt_tokens + excluded.prompt_tokens, completion_tokens = u.completion_tokens + excluded.completion_tokens;
    RETURN NULL;
  END $$;
  CREATE TRIGGER chat_usage_hourly AFTER INSERT ON chat_usage FOR EACH ROW EXECUTE FUNCTION mediagate_chat_usage_hourly();
  CREATE FUNCTION mediagate_ledger_captured() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO usage_hourly AS u (hour, model, key_id, account_id, provider, captured_micro)
    VALUES ((NEW.created_at / 3600000) * 3600000, COALESCE(NEW.model, ''), COALESCE(NEW.key_id, ''), NEW.account_id,
      COALESCE((SELECT provider FROM tasks WHERE id = NEW.task_id), ''), NEW.amount_micro)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET captured_micro = u.captured_micro + excluded.captured_micro;
    INSERT INTO usage_daily AS u (day, model, key_id, account_id, provider, captured_micro)
    VALUES ((NEW.created_at / 86400000) * 86400000, COALESCE(NEW.model, ''), COALESCE(NEW.key_id, ''), NEW.account_id,
      COALESCE((SELECT provider FROM tasks WHERE id = NEW.task_id), ''), NEW.amount_micro)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET captured_micro = u.captured_micro + excluded.captured_micro;
    RETURN NULL;
  END $$;
  CREATE TRIGGER ledger_usage_captured AFTER INSERT ON ledger FOR EACH ROW
    WHEN (NEW.kind = 'capture') EXECUTE FUNCTION mediagate_ledger_captured();
  CREATE TABLE channel_states (
    channel       text PRIMARY KEY,
    state         text NOT NULL,
    since         bigint NOT NULL,
    last_error    text,
    last_error_at bigint,
    updated_at    bigint NOT NULL
  );
  CREATE TABLE channel_minutes (
    channel     text NOT NULL,
    minute      bigint NOT NULL,
    ok          bigint NOT NULL DEFAULT 0,
    faults      bigint NOT NULL DEFAULT 0,
    errors      bigint NOT NULL DEFAULT 0,
    refused     bigint NOT NULL DEFAULT 0,
    calls_timed bigint NOT NULL DEFAULT 0,
    seconds     float8 NOT NULL DEFAULT 0,
    PRIMARY KEY (channel, minute)
  );
  CREATE INDEX tasks_admin_created ON tasks (created_at, id);
  `,
  // Web console sessions (G361): the cookie's hash, the key's hash, the CSRF token, the times.
  `
  CREATE TABLE console_sessions (
    id_hash    text PRIMARY KEY,
    key_hash   text NOT NULL,
    csrf_token text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
  );
  CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
  `,
  // Submits counted once per INSERT statement from its transition table (G326), not once per row:
  // a batch of a hundred tasks of one key and model is one upsert per table, not two hundred.
  `
  DROP TRIGGER tasks_usage_submitted ON tasks;
  DROP FUNCTION mediagate_task_submitted();
  CREATE FUNCTION mediagate_tasks_submitted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO usage_hourly AS u (hour, model, key_id, account_id, provider, submitted)
    SELECT (i.created_at / 3600000) * 3600000, i.model, i.owner_key_id,
      COALESCE(i.account_id, (SELECT account_id FROM api_keys WHERE id = i.owner_key_id), ''), i.provider, COUNT(*)
    FROM inserted i GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET submitted = u.submitted + excluded.submitted;
    INSERT INTO usage_daily AS u (day, model, key_id, account_id, provider, submitted)
    SELECT (i.created_at / 86400000) * 86400000, i.model, i.owner_key_id,
      COALESCE(i.account_id, (SELECT account_id FROM api_keys WHERE id = i.owner_key_id), ''), i.provider, COUNT(*)
    FROM inserted i GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET submitted = u.submitted + excluded.submitted;
    RETURN NULL;
  END $$;
  CREATE TRIGGER tasks_usage_submitted AFTER INSERT ON tasks REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION mediagate_tasks_submitted();
  `,
  // Tasks per minute by status (G370): the status changes of a time range, read from this index alone.
  `
  CREATE INDEX task_events_at ON task_events (at, status);
  `,
  // Claims in turn across keys read each key's earliest due deliveries from this index (G480), not
  // every due delivery sorted.
  `
  CREATE INDEX webhook_deliveries_key_due ON webhook_deliveries (owner_key_id, next_attempt_at, id) WHERE status = 'pending';
  `,
];

/** The schema version the migrations lead to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The advisory lock held while migrating: one process migrates, the others wait and then find nothing to do. */
const MIGRATION_LOCK = 0x6d67_6d69_67; // "mgmig"

/**
 * Applies the migrations the database lacks (up to `upTo`: tests build an older schema with it).
 * Processes started together serialise on a
 * session-level advisory lock (`pg_advisory_lock`), taken before anything is read; each migration
 * commits with its `schema_migrations` row, so a crash leaves either the step and its row or neither.
 */
export async function migrate(pool: pg.Pool, upTo = MIGRATIONS.length): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)');
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      for (let version = current + 1; version <= upTo; version++) {
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
