/**
 * Request and reply shapes of a mediagate gateway's admin API (`/admin/v1/*`, its docs G300-G325),
 * written by hand like types.ts; the gateway's tests check them against its own schemas, both ways
 * (test/unit/client-types.test.ts).
 */

import type { AnyTask, Family, TaskStatus } from './types.js';

export type KeyRole = 'caller' | 'admin';

/** A key's own limits; null: the server's default (credits: no spending cap). */
export interface KeyLimits {
  /** Submits (POST, DELETE) per second, bursts of twice that. */
  submits: number | null;
  /** Queries (GET) per second, bursts of twice that. */
  queries: number | null;
  /** Spending cap, credits. */
  credits: number | null;
  /** Queued and processing tasks at once. */
  tasks_in_flight: number | null;
}

/** An API key: never its secret. Times are Unix seconds. */
export interface AdminKey {
  id: string;
  object: 'api_key';
  name: string;
  role: KeyRole;
  account_id: string;
  /** Model names and `family:*` patterns the key may use; null: every model. */
  models: string[] | null;
  expires_at: number | null;
  limits: KeyLimits;
  webhook_url: string | null;
  created: number;
  last_used: number | null;
  revoked: boolean;
  revoked_at: number | null;
}

/** A new key: its secret is in this answer only. */
export interface AdminKeyCreated extends AdminKey {
  key: string;
}
/** A rotated key: the new secret (this answer only) and until when the old one is still accepted. */
export interface AdminKeyRotated extends AdminKey {
  key: string;
  previous_valid_until: number | null;
}

export interface KeyCreateParams {
  name: string;
  role?: KeyRole;
  /** An existing account; absent: a new account of the key's own. */
  account_id?: string;
  models?: string[] | null;
  /** Unix seconds, in the future; null: never. */
  expires_at?: number | null;
  limits?: Partial<KeyLimits>;
  webhook_url?: string | null;
}

/** What to change (absent: unchanged). A key's role and account never change. */
export type KeyUpdateParams = Partial<Omit<KeyCreateParams, 'role' | 'account_id'>>;

export interface KeyRotateParams {
  /** How long the replaced secret is still accepted, seconds (0-2592000; default 0). */
  grace_seconds?: number;
}

export interface AdminListParams {
  /** 1-100 (default 20). */
  limit?: number;
  /** `next_cursor` of the previous page (same filters). */
  cursor?: string;
}

export interface KeyListParams extends AdminListParams {
  account_id?: string;
  role?: KeyRole;
  revoked?: boolean;
  /** Only keys whose name contains this text (any case). */
  q?: string;
}

export interface AdminList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Amounts in credits. */
export interface AdminAccount {
  id: string;
  object: 'account';
  name: string;
  created: number;
  balance: number;
  held: number;
  spent: number;
}

export interface AccountListParams extends AdminListParams {
  q?: string;
}

export type LedgerKind = 'grant' | 'hold' | 'capture' | 'release' | 'adjust';

export interface AdminLedgerEntry {
  id: number;
  object: 'ledger_entry';
  kind: LedgerKind;
  amount: number;
  /** A capture's or release's hold. */
  settled: number | null;
  key_id: string | null;
  task_id: string | null;
  request_id: string | null;
  model: string | null;
  note: string | null;
  created: number;
}

export interface LedgerParams extends AdminListParams {
  kind?: LedgerKind[];
}

export interface GrantParams {
  /** Credits (at most 6 decimals, not 0); negative: taken back, at most what is available. */
  amount: number;
  note: string;
}

export interface AdminGrant {
  object: 'grant';
  entry: AdminLedgerEntry;
  account: AdminAccount;
}

export type AuditAction = 'key.create' | 'key.update' | 'key.revoke' | 'key.rotate' | 'account.create' | 'account.grant' | 'task.cancel' | 'channel.probe';

export interface AdminAuditEntry {
  id: number;
  object: 'audit_entry';
  created: number;
  /** The admin key's id, `cli` or `bootstrap`. */
  actor: string;
  /** The actor key's name as it is now; null for `cli`, `bootstrap` and a key no longer stored. */
  actor_name: string | null;
  action: AuditAction;
  target: string;
  request_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditParams extends AdminListParams {
  actor?: string;
  action?: AuditAction;
  target?: string;
  /** Unix seconds or an ISO-8601 date-time with a time zone. */
  since?: number | string;
  until?: number | string;
}

export interface AdminSettings {
  object: 'settings';
  /** The effective configuration, every secret `[redacted]`. */
  settings: Record<string, unknown>;
  /** Every server setting by its environment variable, in the settings reference's order; secrets `[redacted]`. */
  variables: AdminSettingVariable[];
}

/** A server setting by its environment variable (`GET /admin/v1/settings`). */
export interface AdminSettingVariable {
  /** e.g. `MEDIAGATE_BODY_LIMIT`. */
  name: string;
  /** Its section of the settings reference, e.g. `Server`. */
  group: string;
  /** The value in force (the default when unset); `null` when unset without default; a secret's `[redacted]`. */
  value: unknown;
  /** Whether the environment set it; else the default applies. */
  set: boolean;
}

/** A task of any tenant (`GET /admin/v1/tasks`). Times in Unix seconds. */
export interface AdminTask {
  id: string;
  object: 'admin_task';
  key_id: string;
  account_id: string | null;
  family: Family;
  form: string | null;
  model: string;
  /** The provider (channel) it is at, or that made its result. */
  provider: string;
  status: TaskStatus;
  progress: number;
  attempt_count: number;
  error: string | null;
  /** The price at submit, credits. */
  credits: number;
  created: number;
  started: number | null;
  finished: number | null;
}

export interface AdminTaskAttempt {
  attempt: number;
  provider: string;
  started: number;
  ended: number | null;
  /** `requeued`: a retry, a new generation, or the gateway giving the attempt back. */
  outcome: 'completed' | 'failed' | 'cancelled' | 'requeued' | null;
  error: string | null;
}

export interface AdminTaskEvent {
  at: number;
  at_ms: number;
  /** null for the submit. */
  from: TaskStatus | null;
  status: TaskStatus;
  attempt: number;
  provider: string;
  error: string | null;
}

export interface AdminTaskLedgerEntry {
  kind: 'hold' | 'capture' | 'release';
  amount: number;
  created: number;
}

export interface AdminWebhookDelivery {
  id: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: Array<{ at: number; status_code: number | null; error: string | null; duration_ms: number }>;
  next_attempt_at: number | null;
  created: number;
}

/** One task with what only an operator may see (`GET /admin/v1/tasks/{id}`). */
export interface AdminTaskDetail extends AdminTask {
  /** The task as its caller sees it. */
  view: AnyTask;
  /** Whether `tasks.cancel(id)` would cancel it now: queued, or processing where its provider can stop a generation. */
  cancellable: boolean;
  /** The request as accepted (validated, normalised, defaults applied). */
  request: Record<string, unknown>;
  upstream: { provider_type: string | null; channel: string; task_id: string | null; generation: number } | null;
  attempts: AdminTaskAttempt[];
  hold: { amount: number; settlement: AdminTaskLedgerEntry | null } | null;
  ledger: AdminTaskLedgerEntry[];
  webhooks: AdminWebhookDelivery[];
  /** Every status change, oldest first, the submit first. */
  timeline: AdminTaskEvent[];
}

export interface AdminTaskListParams extends AdminListParams {
  key_id?: string;
  account_id?: string;
  family?: Family;
  model?: string;
  status?: TaskStatus;
  provider?: string;
  /** Unix seconds or an ISO-8601 date-time with a time zone. */
  created_after?: number | string;
  created_before?: number | string;
}

/** Calls of a channel over a window, every process. */
export interface ChannelWindow {
  calls: number;
  ok: number;
  faults: number;
  errors: number;
  refused: number;
  latency_ms: number | null;
}

/** A provider (channel) across the cluster (`GET /admin/v1/channels`). */
export interface AdminChannel {
  id: string;
  object: 'channel';
  type: string | null;
  families: string[];
  cancel: boolean;
  routes: Array<{ model: string; upstream_model: string | null; priority: number; weight: number }>;
  circuit: { state: 'closed' | 'open' | 'half-open'; since: number | null };
  in_flight: number;
  last_5m: ChannelWindow;
  last_hour: ChannelWindow;
  last_error: { message: string; at: number } | null;
}

export interface AdminChannelProbe {
  object: 'channel_probe';
  channel: string;
  ok: boolean;
  call: string | null;
  status: number | null;
  latency_ms: number;
  error: string | null;
  at: number;
}

export type UsageGroup = 'model' | 'key' | 'account' | 'provider';

export interface UsageParams {
  group_by?: UsageGroup;
  interval?: 'hour' | 'day';
  /** Unix seconds or an ISO-8601 date-time with a time zone. */
  from?: number | string;
  to?: number | string;
}

export interface UsageBucket {
  bucket: number;
  group: string | null;
  submitted: number;
  completed: number;
  failed: number;
  cancelled: number;
  video_seconds: number;
  images: number;
  chat_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  credits_captured: number;
}

export interface TaskActivityParams {
  /** 1 to 1440 (default 60). */
  minutes?: number;
  /** The end, rounded up to a whole minute: Unix seconds or an ISO-8601 date-time with a time zone (default: the end of the current minute). */
  to?: number | string;
}

/** One minute of `GET /admin/v1/task-activity`: tasks submitted in it, and how many entered each status. */
export interface TaskActivityMinute {
  /** The minute's start, Unix seconds. */
  minute: number;
  submitted: number;
  queued: number;
  processing: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface AdminTaskActivity {
  object: 'task_activity';
  interval: 'minute';
  from: number;
  to: number;
  /** Every minute of [from, to), oldest first, zeros included. */
  data: TaskActivityMinute[];
}

export interface AdminUsage {
  object: 'usage';
  group_by: UsageGroup;
  interval: 'hour' | 'day';
  from: number;
  to: number;
  data: UsageBucket[];
}
