/**
 * The operator's reads (G317-G324), shared by the SQLite and PostgreSQL stores: the cross-tenant
 * task list, a task's timeline, the usage aggregates, the channels' shared figures.
 */
import { placeholderOf, type Dialect } from './key-rows.js';
import type {
  AdminTaskQuery,
  ChannelMinute,
  ChannelStateRecord,
  TaskEvent,
  TaskMinuteCount,
  TaskMinutesQuery,
  TaskStatus,
  UsageQuery,
  UsageRow,
} from './types.js';

/** The list statement for `query` and a name for its shape (newest first: the index tasks_admin_created read backwards, or a filter's own). */
export function adminTaskListSql(query: AdminTaskQuery, dialect: Dialect): { shape: string; text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const filters: Array<[unknown, () => string]> = [
    [query.keyId, () => `owner_key_id = ${next(query.keyId)}`],
    [query.accountId, () => `owner_key_id IN (SELECT id FROM api_keys WHERE account_id = ${next(query.accountId)})`],
    [query.family, () => `family = ${next(query.family)}`],
    [query.model, () => `model = ${next(query.model)}`],
    [query.status, () => `status = ${next(query.status)}`],
    [query.provider, () => `provider = ${next(query.provider)}`],
    [query.createdAfter, () => `created_at > ${next(query.createdAfter)}`],
    [query.createdBefore, () => `created_at < ${next(query.createdBefore)}`],
    [query.before, () => `(created_at, id) < (${next(query.before!.createdAt)}, ${next(query.before!.id)})`],
  ];
  const where = filters.filter(([v]) => v !== undefined).map(([, sql]) => sql());
  const limit = next(query.limit);
  const shape = filters.map(([v]) => (v === undefined ? 0 : 1)).join('');
  return {
    shape,
    text: `SELECT * FROM tasks${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    values,
  };
}

export interface TaskEventRow {
  id: number;
  task_id: string;
  at: number;
  from_status: TaskStatus | null;
  status: TaskStatus;
  attempt: number;
  provider: string;
  upstream_id: string | null;
  error: string | null;
}

export const eventOfRow = (r: TaskEventRow): TaskEvent => ({
  id: Number(r.id),
  taskId: r.task_id,
  at: Number(r.at),
  from: r.from_status,
  status: r.status,
  attempt: r.attempt,
  provider: r.provider,
  upstreamId: r.upstream_id,
  error: r.error,
});

const USAGE_GROUP_COLUMNS = { model: 'model', key: 'key_id', account: 'account_id', provider: 'provider' } as const;

/**
 * The sums of the aggregates per bucket and group in [from, to): hours from usage_hourly, days from
 * usage_daily (kept by the same triggers, so a month by day reads 30 rows per group, not 720); the
 * primary key's leading bucket column bounds the read.
 */
export function usageSql(query: UsageQuery, dialect: Dialect): { text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  const group = USAGE_GROUP_COLUMNS[query.groupBy];
  const [table, bucket] = query.interval === 'day' ? ['usage_daily', 'day'] : ['usage_hourly', 'hour'];
  const sums = [
    'submitted',
    'completed',
    'failed',
    'cancelled',
    'video_seconds',
    'images',
    'chat_requests',
    'prompt_tokens',
    'completion_tokens',
    'captured_micro',
  ]
    .map((c) => `SUM(${c}) AS ${c}`)
    .join(', ');
  return {
    text: `SELECT ${bucket} AS bucket, ${group} AS grp, ${sums} FROM ${table} WHERE ${bucket} >= ${mark(1)} AND ${bucket} < ${mark(2)}
      GROUP BY ${bucket}, ${group} ORDER BY bucket, grp`,
    values: [query.from, query.to],
  };
}

export interface UsageSqlRow {
  bucket: number | string;
  grp: string;
  submitted: number | string;
  completed: number | string;
  failed: number | string;
  cancelled: number | string;
  video_seconds: number | string;
  images: number | string;
  chat_requests: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  captured_micro: number | string;
}

export const usageOfRow = (r: UsageSqlRow): UsageRow => ({
  bucket: Number(r.bucket),
  group: r.grp,
  submitted: Number(r.submitted),
  completed: Number(r.completed),
  failed: Number(r.failed),
  cancelled: Number(r.cancelled),
  videoSeconds: Number(r.video_seconds),
  images: Number(r.images),
  chatRequests: Number(r.chat_requests),
  promptTokens: Number(r.prompt_tokens),
  completionTokens: Number(r.completion_tokens),
  capturedMicro: Number(r.captured_micro),
});

/**
 * Tasks per minute by status in [from, to) (G370): the status changes from task_events through its
 * index on (at, status), the submits from tasks through tasks_admin_created (created_at first); both
 * read from the index alone, so the cost follows the window's rows, not the tables' size.
 */
export function taskMinutesSql(query: TaskMinutesQuery, dialect: Dialect): { text: string; values: unknown[] } {
  const mark = placeholderOf(dialect);
  return {
    text: `SELECT (at / 60000) * 60000 AS minute, status, COUNT(*) AS n FROM task_events WHERE at >= ${mark(1)} AND at < ${mark(2)}
      GROUP BY (at / 60000) * 60000, status
      UNION ALL
      SELECT (created_at / 60000) * 60000 AS minute, 'submitted' AS status, COUNT(*) AS n FROM tasks WHERE created_at >= ${mark(3)} AND created_at < ${mark(4)}
      GROUP BY (created_at / 60000) * 60000`,
    values: [query.from, query.to, query.from, query.to],
  };
}

export interface TaskMinuteRow {
  minute: number | string;
  status: TaskMinuteCount['status'];
  n: number | string;
}

export const taskMinuteOfRow = (r: TaskMinuteRow): TaskMinuteCount => ({ minute: Number(r.minute), status: r.status, count: Number(r.n) });

export interface ChannelStateRow {
  channel: string;
  state: ChannelStateRecord['state'];
  since: number;
  last_error: string | null;
  last_error_at: number | null;
  updated_at: number;
}

export const channelStateOfRow = (r: ChannelStateRow): ChannelStateRecord => ({
  channel: r.channel,
  state: r.state,
  since: Number(r.since),
  lastError: r.last_error,
  lastErrorAt: r.last_error_at === null ? null : Number(r.last_error_at),
  updatedAt: Number(r.updated_at),
});

export interface ChannelMinuteRow {
  channel: string;
  minute: number;
  ok: number;
  faults: number;
  errors: number;
  refused: number;
  calls_timed: number;
  seconds: number;
}

export const minuteOfRow = (r: ChannelMinuteRow): ChannelMinute => ({
  channel: r.channel,
  minute: Number(r.minute),
  ok: Number(r.ok),
  faults: Number(r.faults),
  errors: Number(r.errors),
  refused: Number(r.refused),
  callsTimed: Number(r.calls_timed),
  seconds: Number(r.seconds),
});

/** The upsert adding one minute row of outcomes. */
export function channelMinuteUpsert(dialect: Dialect): string {
  const m = placeholderOf(dialect);
  const t = dialect === 'postgres' ? 'c.' : '';
  return `INSERT INTO channel_minutes ${dialect === 'postgres' ? 'AS c ' : ''}(channel, minute, ok, faults, errors, refused, calls_timed, seconds)
    VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(m).join(', ')})
    ON CONFLICT (channel, minute) DO UPDATE SET ok = ${t}ok + excluded.ok, faults = ${t}faults + excluded.faults, errors = ${t}errors + excluded.errors,
      refused = ${t}refused + excluded.refused, calls_timed = ${t}calls_timed + excluded.calls_timed, seconds = ${t}seconds + excluded.seconds`;
}

export const minuteValues = (r: ChannelMinute): unknown[] => [r.channel, r.minute, r.ok, r.faults, r.errors, r.refused, r.callsTimed, r.seconds];

export const PROCESSING_BY_PROVIDER_SQL = "SELECT provider, COUNT(*) AS n FROM tasks WHERE status = 'processing' GROUP BY provider";
