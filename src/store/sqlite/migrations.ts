import type Database from 'better-sqlite3';

/** Ordered schema steps; each runs once, in a transaction, recorded in `schema_migrations`. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
  );
  CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    owner_key_id     TEXT NOT NULL,
    family           TEXT NOT NULL,
    form             TEXT,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    request          TEXT NOT NULL,
    status           TEXT NOT NULL,
    progress         INTEGER NOT NULL DEFAULT 0,
    result           TEXT,
    error            TEXT,
    amount           REAL NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    attempts         INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    run_after        INTEGER NOT NULL DEFAULT 0,
    expires_at       INTEGER
  );
  CREATE INDEX tasks_queue ON tasks (provider, run_after, created_at) WHERE status = 'queued';
  CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'processing';
  CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
  `,
  `
  CREATE TABLE chat_usage (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id            TEXT NOT NULL,
    model             TEXT NOT NULL,
    request_id        TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at        INTEGER NOT NULL
  );
  CREATE INDEX chat_usage_key ON chat_usage (key_id, created_at);
  `,
  `
  CREATE TABLE assets (
    id           TEXT PRIMARY KEY,
    owner_key_id TEXT NOT NULL,
    status       TEXT NOT NULL,
    reason       TEXT,
    kind         TEXT,
    format       TEXT,
    width        INTEGER,
    height       INTEGER,
    duration     REAL,
    fps          REAL,
    bytes        INTEGER NOT NULL,
    file         TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
  );
  CREATE INDEX assets_owner ON assets (owner_key_id, expires_at) WHERE status = 'approved';
  CREATE INDEX assets_expiry ON assets (expires_at);
  `,
  `
  CREATE TABLE idempotency_keys (
    key_id       TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status_code  INTEGER,
    response     TEXT,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (key_id, idem_key)
  );
  CREATE INDEX idempotency_created ON idempotency_keys (created_at);
  `,
  `
  ALTER TABLE api_keys ADD COLUMN submit_rate INTEGER;
  ALTER TABLE api_keys ADD COLUMN query_rate INTEGER;
  CREATE INDEX tasks_in_flight ON tasks (owner_key_id) WHERE status IN ('queued', 'processing');
  `,
  `
  ALTER TABLE tasks ADD COLUMN idempotency_key TEXT;
  CREATE INDEX tasks_idempotency ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
  `,
  // Fair claims between keys (start-time fair queuing, G85) and the gateway's own faults (G84).
  `
  ALTER TABLE tasks ADD COLUMN vtime INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN server_faults INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX tasks_fair_queue ON tasks (provider, vtime, created_at) WHERE status = 'queued';
  CREATE TABLE fair_keys (key_id TEXT PRIMARY KEY, last_vtime INTEGER NOT NULL);
  CREATE TABLE fair_clock (id INTEGER PRIMARY KEY CHECK (id = 1), vtime INTEGER NOT NULL);
  INSERT INTO fair_clock (id, vtime) VALUES (1, 0);
  `,
  // Generations at upstreams (G86): a started task waits for its next check with no lease.
  `
  ALTER TABLE tasks ADD COLUMN upstream TEXT;
  CREATE INDEX tasks_checks ON tasks (provider, run_after) WHERE status = 'processing' AND lease_owner IS NULL;
  `,
  // Credits (G200-G205): accounts own keys; the ledger is append-only (the triggers refuse changes)
  // and each hold is settled at most once (the unique indexes); every existing key gets an account.
  `
  CREATE TABLE accounts (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    available_micro INTEGER NOT NULL DEFAULT 0,
    held_micro      INTEGER NOT NULL DEFAULT 0,
    spent_micro     INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE ledger (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('grant', 'hold', 'capture', 'release', 'adjust')),
    amount_micro  INTEGER NOT NULL,
    settled_micro INTEGER,
    key_id        TEXT,
    task_id       TEXT,
    request_id    TEXT,
    model         TEXT,
    note          TEXT,
    created_at    INTEGER NOT NULL
  );
  CREATE INDEX ledger_account ON ledger (account_id, id);
  CREATE INDEX ledger_settled ON ledger (account_id, created_at) WHERE kind IN ('capture', 'release');
  CREATE UNIQUE INDEX ledger_task_hold ON ledger (task_id) WHERE kind = 'hold' AND task_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_task_settled ON ledger (task_id) WHERE kind IN ('capture', 'release') AND task_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_request_hold ON ledger (request_id) WHERE kind = 'hold' AND request_id IS NOT NULL;
  CREATE UNIQUE INDEX ledger_request_settled ON ledger (request_id) WHERE kind IN ('capture', 'release') AND request_id IS NOT NULL;
  CREATE INDEX ledger_request_holds ON ledger (created_at) WHERE kind = 'hold' AND request_id IS NOT NULL;
  CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
  CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
  ALTER TABLE api_keys ADD COLUMN account_id TEXT;
  ALTER TABLE api_keys ADD COLUMN spend_cap_micro INTEGER;
  ALTER TABLE api_keys ADD COLUMN held_micro INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE api_keys ADD COLUMN spent_micro INTEGER NOT NULL DEFAULT 0;
  INSERT INTO accounts (id, name, created_at) SELECT 'acct_' || substr(id, 5), name, created_at FROM api_keys;
  UPDATE api_keys SET account_id = 'acct_' || substr(id, 5);
  ALTER TABLE tasks ADD COLUMN account_id TEXT;
  ALTER TABLE tasks ADD COLUMN hold_micro INTEGER;
  ALTER TABLE tasks ADD COLUMN per_second_micro INTEGER;
  `,
  // The task list (G216): a key's tasks newest first, read backwards from a (created_at, id) position.
  `
  CREATE INDEX tasks_owner_created ON tasks (owner_key_id, created_at, id);
  `,
  // Caller webhooks (G208-G215): the URL in force kept with the task, the key's default URL and
  // signing secrets, and the outbox, written with the terminal transition and deleted with its task.
  `
  ALTER TABLE tasks ADD COLUMN callback_url TEXT;
  ALTER TABLE api_keys ADD COLUMN webhook_url TEXT;
  ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;
  ALTER TABLE api_keys ADD COLUMN webhook_secret_previous TEXT;
  ALTER TABLE api_keys ADD COLUMN webhook_secret_rotated_at INTEGER;
  CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    task_id         TEXT NOT NULL UNIQUE REFERENCES tasks (id) ON DELETE CASCADE,
    owner_key_id    TEXT NOT NULL,
    url             TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    body            TEXT,
    attempts        TEXT NOT NULL DEFAULT '[]',
    attempt_count   INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    lease_owner     TEXT,
    created_at      INTEGER NOT NULL
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
  ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'caller' CHECK (role IN ('caller', 'admin'));
  ALTER TABLE api_keys ADD COLUMN models TEXT;
  ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
  ALTER TABLE api_keys ADD COLUMN max_in_flight INTEGER;
  CREATE INDEX api_keys_created ON api_keys (created_at, id);
  CREATE TABLE api_key_grace (
    hash        TEXT PRIMARY KEY,
    key_id      TEXT NOT NULL,
    valid_until INTEGER NOT NULL
  );
  CREATE INDEX api_key_grace_key ON api_key_grace (key_id);
  CREATE TABLE api_key_usage (
    key_id    TEXT PRIMARY KEY,
    last_used INTEGER NOT NULL
  );
  CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    request_id TEXT,
    details    TEXT NOT NULL
  );
  CREATE INDEX audit_log_actor ON audit_log (actor, id);
  CREATE INDEX audit_log_target ON audit_log (target, id);
  CREATE INDEX audit_log_at ON audit_log (at);
  CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  `,
  // Worker heartbeats (G264): one row per process that runs tasks, refreshed every few seconds.
  `
  CREATE TABLE worker_beats (
    id      TEXT PRIMARY KEY,
    role    TEXT NOT NULL,
    seen_at INTEGER NOT NULL
  );
  CREATE INDEX worker_beats_seen ON worker_beats (seen_at);
  `,
  // The rest of the admin API (G317-G324): every status change of a task (written by triggers, in
  // the transaction of the change, whichever statement made it); usage aggregates per hour, kept by
  // the same triggers as tasks are submitted and end, as chat replies are recorded and as credits are
  // captured; channels' circuit states and outcomes per minute, shared by every process.
  `
  ALTER TABLE tasks ADD COLUMN attempt_error TEXT;
  CREATE TABLE task_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id     TEXT NOT NULL,
    at          INTEGER NOT NULL,
    from_status TEXT,
    status      TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    provider    TEXT NOT NULL,
    upstream_id TEXT,
    error       TEXT
  );
  CREATE INDEX task_events_task ON task_events (task_id, id);
  CREATE TRIGGER tasks_events_deleted AFTER DELETE ON tasks BEGIN DELETE FROM task_events WHERE task_id = OLD.id; END;
  CREATE TABLE usage_hourly (
    hour              INTEGER NOT NULL,
    model             TEXT NOT NULL,
    key_id            TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    provider          TEXT NOT NULL,
    submitted         INTEGER NOT NULL DEFAULT 0,
    completed         INTEGER NOT NULL DEFAULT 0,
    failed            INTEGER NOT NULL DEFAULT 0,
    cancelled         INTEGER NOT NULL DEFAULT 0,
    video_seconds     REAL NOT NULL DEFAULT 0,
    images            INTEGER NOT NULL DEFAULT 0,
    chat_requests     INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    captured_micro    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (hour, model, key_id, account_id, provider)
  ) WITHOUT ROWID;
  CREATE TABLE usage_daily (
    day               INTEGER NOT NULL,
    model             TEXT NOT NULL,
    key_id            TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    provider          TEXT NOT NULL,
    submitted         INTEGER NOT NULL DEFAULT 0,
    completed         INTEGER NOT NULL DEFAULT 0,
    failed            INTEGER NOT NULL DEFAULT 0,
    cancelled         INTEGER NOT NULL DEFAULT 0,
    video_seconds     REAL NOT NULL DEFAULT 0,
    images            INTEGER NOT NULL DEFAULT 0,
    chat_requests     INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    captured_micro    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, model, key_id, account_id, provider)
  ) WITHOUT ROWID;
  CREATE TRIGGER tasks_usage_submitted AFTER INSERT ON tasks BEGIN
    INSERT INTO usage_hourly (hour, model, key_id, account_id, provider, submitted)
    VALUES ((NEW.created_at / 3600000) * 3600000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider, 1)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET submitted = submitted + 1;
    INSERT INTO usage_daily (day, model, key_id, account_id, provider, submitted)
    VALUES ((NEW.created_at / 86400000) * 86400000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider, 1)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET submitted = submitted + 1;
  END;
  CREATE TRIGGER tasks_status_events AFTER UPDATE OF status ON tasks WHEN NEW.status <> OLD.status BEGIN
    INSERT INTO task_events (task_id, at, from_status, status, attempt, provider, upstream_id, error)
    VALUES (NEW.id, NEW.updated_at, OLD.status, NEW.status, NEW.attempts, NEW.provider,
      json_extract(OLD.upstream, '$.ref.id'), COALESCE(NEW.error, CASE WHEN NEW.status = 'queued' THEN NEW.attempt_error END));
  END;
  CREATE TRIGGER tasks_usage_ended AFTER UPDATE OF status ON tasks
    WHEN NEW.status <> OLD.status AND NEW.status IN ('completed', 'failed', 'cancelled') BEGIN
    INSERT INTO usage_hourly (hour, model, key_id, account_id, provider, completed, failed, cancelled, video_seconds, images)
    VALUES ((COALESCE(NEW.finished_at, NEW.updated_at) / 3600000) * 3600000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider,
      NEW.status = 'completed', NEW.status = 'failed', NEW.status = 'cancelled',
      CASE WHEN NEW.status = 'completed' THEN COALESCE(json_extract(NEW.result, '$.actualDuration'),
        (SELECT SUM(json_extract(f.value, '$.duration')) FROM json_each(NEW.result, '$.files') f WHERE json_extract(f.value, '$.contentType') LIKE 'video/%'), 0) ELSE 0 END,
      CASE WHEN NEW.status = 'completed' THEN (SELECT COUNT(*) FROM json_each(NEW.result, '$.files') f WHERE json_extract(f.value, '$.contentType') LIKE 'image/%') ELSE 0 END)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET completed = completed + excluded.completed,
      failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled,
      video_seconds = video_seconds + excluded.video_seconds, images = images + excluded.images;
    INSERT INTO usage_daily (day, model, key_id, account_id, provider, completed, failed, cancelled, video_seconds, images)
    VALUES ((COALESCE(NEW.finished_at, NEW.updated_at) / 86400000) * 86400000, NEW.model, NEW.owner_key_id,
      COALESCE(NEW.account_id, (SELECT account_id FROM api_keys WHERE id = NEW.owner_key_id), ''), NEW.provider,
      NEW.status = 'completed', NEW.status = 'failed', NEW.status = 'cancelled',
      CASE WHEN NEW.status = 'completed' THEN COALESCE(json_extract(NEW.result, '$.actualDuration'),
        (SELECT SUM(json_extract(f.value, '$.duration')) FROM json_each(NEW.result, '$.files') f WHERE json_extract(f.value, '$.contentType') LIKE 'video/%'), 0) ELSE 0 END,
      CASE WHEN NEW.status = 'completed' THEN (SELECT COUNT(*) FROM json_each(NEW.result, '$.files') f WHERE json_extract(f.value, '$.contentType') LIKE 'image/%') ELSE 0 END)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET completed = completed + excluded.completed,
      failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled,
      video_seconds = video_seconds + excluded.video_seconds, images = images + excluded.images;
  END;
  CREATE TRIGGER chat_usage_hourly AFTER INSERT ON chat_usage BEGIN
    INSERT INTO usage_hourly (hour, model, key_id, account_id, provider, chat_requests, prompt_tokens, completion_tokens)
    VALUES ((NEW.created_at / 3600000) * 3600000, NEW.model, NEW.key_id,
      COALESCE((SELECT account_id FROM api_keys WHERE id = NEW.key_id), ''), '', 1, NEW.prompt_tokens, NEW.completion_tokens)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET chat_requests = chat_requests + 1,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens;
    INSERT INTO usage_daily (day, model, key_id, account_id, provider, chat_requests, prompt_tokens, completion_tokens)
    VALUES ((NEW.created_at / 86400000) * 86400000, NEW.model, NEW.key_id,
      COALESCE((SELECT account_id FROM api_keys WHERE id = NEW.key_id), ''), '', 1, NEW.prompt_tokens, NEW.completion_tokens)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET chat_requests = chat_requests + 1,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens;
  END;
  CREATE TRIGGER ledger_usage_captured AFTER INSERT ON ledger WHEN NEW.kind = 'capture' BEGIN
    INSERT INTO usage_hourly (hour, model, key_id, account_id, provider, captured_micro)
    VALUES ((NEW.created_at / 3600000) * 3600000, COALESCE(NEW.model, ''), COALESCE(NEW.key_id, ''), NEW.account_id,
      COALESCE((SELECT provider FROM tasks WHERE id = NEW.task_id), ''), NEW.amount_micro)
    ON CONFLICT (hour, model, key_id, account_id, provider) DO UPDATE SET captured_micro = captured_micro + excluded.captured_micro;
    INSERT INTO usage_daily (day, model, key_id, account_id, provider, captured_micro)
    VALUES ((NEW.created_at / 86400000) * 86400000, COALESCE(NEW.model, ''), COALESCE(NEW.key_id, ''), NEW.account_id,
      COALESCE((SELECT provider FROM tasks WHERE id = NEW.task_id), ''), NEW.amount_micro)
    ON CONFLICT (day, model, key_id, account_id, provider) DO UPDATE SET captured_micro = captured_micro + excluded.captured_micro;
  END;
  CREATE TABLE channel_states (
    channel    TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    since      INTEGER NOT NULL,
    last_error TEXT,
    last_error_at INTEGER,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE channel_minutes (
    channel    TEXT NOT NULL,
    minute     INTEGER NOT NULL,
    ok         INTEGER NOT NULL DEFAULT 0,
    faults     INTEGER NOT NULL DEFAULT 0,
    errors     INTEGER NOT NULL DEFAULT 0,
    refused    INTEGER NOT NULL DEFAULT 0,
    calls_timed INTEGER NOT NULL DEFAULT 0,
    seconds    REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (channel, minute)
  ) WITHOUT ROWID;
  CREATE INDEX tasks_admin_created ON tasks (created_at, id);
  `,
  // Web console sessions (G361): the cookie's hash, the key's hash, the CSRF token, the times.
  `
  CREATE TABLE console_sessions (
    id_hash    TEXT PRIMARY KEY,
    key_hash   TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
  `,
  // Submits counted per insert batch by the task store (G326), not by a row trigger: two upserts
  // per task more than tripled the cost of inserting one.
  `
  DROP TRIGGER tasks_usage_submitted;
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

/** The schema version the migrations below lead to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Applies the migrations the database lacks (up to `upTo`: tests build an older schema with it).
 * Several processes may migrate one file at once (two
 * servers started together): each migration re-checks, inside its IMMEDIATE transaction (which
 * holds the write lock), that no other process applied it meanwhile.
 */
export function migrate(db: Database.Database, upTo = MIGRATIONS.length): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  const current = row.v ?? 0;
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  MIGRATIONS.forEach((sql, index) => {
    const version = index + 1;
    if (version <= current || version > upTo) return;
    db.transaction(() => {
      if (applied.get(version) !== undefined) return; // another process got there first
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }).immediate();
  });
}
