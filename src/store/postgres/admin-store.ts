import type pg from 'pg';
import {
  adminTaskListSql,
  channelMinuteUpsert,
  channelStateOfRow,
  eventOfRow,
  minuteOfRow,
  minuteValues,
  PROCESSING_BY_PROVIDER_SQL,
  taskMinuteOfRow,
  taskMinutesSql,
  usageOfRow,
  usageSql,
  type ChannelMinuteRow,
  type ChannelStateRow,
  type TaskEventRow,
  type TaskMinuteRow,
  type UsageSqlRow,
} from '../admin-rows.js';
import { entryOfRow, LEDGER_COLUMNS, type LedgerRow } from '../ledger-rows.js';
import { toRecord, type TaskRow } from '../task-rows.js';
import type {
  AdminStore,
  AdminTaskQuery,
  ChannelMinute,
  ChannelStateRecord,
  LedgerEntry,
  TaskEvent,
  TaskMinuteCount,
  TaskMinutesQuery,
  TaskRecord,
  UsageQuery,
  UsageRow,
} from '../types.js';
import { inTransaction } from './transaction.js';

/** PostgreSQL reads of the admin API across tenants, and the channels' figures shared by every process (G317-G324). */
export class PostgresAdminStore implements AdminStore {
  constructor(private readonly pool: pg.Pool) {}

  async listTasks(query: AdminTaskQuery): Promise<TaskRecord[]> {
    const { shape, text, values } = adminTaskListSql(query, 'postgres');
    const { rows } = await this.pool.query<TaskRow>({ name: `mg_admin_tasks_${shape}`, text, values });
    return rows.map(toRecord);
  }

  async taskEvents(taskId: string): Promise<TaskEvent[]> {
    const { rows } = await this.pool.query<TaskEventRow>({
      name: 'mg_admin_task_events',
      text: 'SELECT * FROM task_events WHERE task_id = $1 ORDER BY id',
      values: [taskId],
    });
    return rows.map(eventOfRow);
  }

  async taskLedger(taskId: string): Promise<LedgerEntry[]> {
    const { rows } = await this.pool.query<LedgerRow>({
      name: 'mg_admin_task_ledger',
      text: `SELECT ${LEDGER_COLUMNS} FROM ledger WHERE task_id = $1 ORDER BY id`,
      values: [taskId],
    });
    return rows.map(entryOfRow);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { text, values } = usageSql(query, 'postgres');
    const { rows } = await this.pool.query<UsageSqlRow>({ name: `mg_admin_usage_${query.groupBy}_${query.interval}`, text, values });
    return rows.map(usageOfRow);
  }

  async taskMinutes(query: TaskMinutesQuery): Promise<TaskMinuteCount[]> {
    const { text, values } = taskMinutesSql(query, 'postgres');
    const { rows } = await this.pool.query<TaskMinuteRow>({ name: 'mg_admin_task_minutes', text, values });
    return rows.map(taskMinuteOfRow);
  }

  async setChannelState(channel: string, state: ChannelStateRecord['state'], since: number): Promise<void> {
    await this.pool.query({
      name: 'mg_channel_state',
      text: `INSERT INTO channel_states (channel, state, since, updated_at) VALUES ($1, $2, $3, $3)
        ON CONFLICT (channel) DO UPDATE SET state = excluded.state, since = excluded.since, updated_at = excluded.updated_at`,
      values: [channel, state, since],
    });
  }

  async setChannelError(channel: string, error: string, at: number): Promise<void> {
    await this.pool.query({
      name: 'mg_channel_error',
      // a channel's first row may be its error: its circuit then never changed (since 0)
      text: `INSERT INTO channel_states (channel, state, since, last_error, last_error_at, updated_at) VALUES ($1, 'closed', 0, $2, $3, $3)
        ON CONFLICT (channel) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at, updated_at = excluded.updated_at`,
      values: [channel, error, at],
    });
  }

  async addChannelMinutes(rows: readonly ChannelMinute[], forgetBefore: number): Promise<void> {
    // in (channel, minute) order: two processes adding the same minutes lock their rows in the same order
    const sorted = [...rows].sort((a, b) => (a.channel === b.channel ? a.minute - b.minute : a.channel < b.channel ? -1 : 1));
    await inTransaction(this.pool, async (client) => {
      for (const r of sorted) await client.query({ name: 'mg_channel_minute', text: channelMinuteUpsert('postgres'), values: minuteValues(r) });
      await client.query({ name: 'mg_channel_minutes_forget', text: 'DELETE FROM channel_minutes WHERE minute < $1', values: [forgetBefore] });
    });
  }

  async channelStates(): Promise<ChannelStateRecord[]> {
    const { rows } = await this.pool.query<ChannelStateRow>('SELECT * FROM channel_states ORDER BY channel COLLATE "C"');
    return rows.map(channelStateOfRow);
  }

  async channelMinutes(since: number): Promise<ChannelMinute[]> {
    const { rows } = await this.pool.query<ChannelMinuteRow>({
      name: 'mg_channel_minutes',
      text: 'SELECT * FROM channel_minutes WHERE minute >= $1 ORDER BY channel, minute',
      values: [since],
    });
    return rows.map(minuteOfRow);
  }

  async processingByProvider(): Promise<Record<string, number>> {
    const { rows } = await this.pool.query<{ provider: string; n: string }>({ name: 'mg_admin_processing', text: PROCESSING_BY_PROVIDER_SQL });
    return Object.fromEntries(rows.map((r) => [r.provider, Number(r.n)]));
  }
}
