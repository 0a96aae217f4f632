import type Database from 'better-sqlite3';
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

/** SQLite reads of the admin API across tenants, and the channels' shared figures (G317-G324). */
export class SqliteAdminStore implements AdminStore {
  private readonly listCache = new Map<string, Database.Statement>();
  private readonly eventsStmt: Database.Statement;
  private readonly ledgerStmt: Database.Statement;
  private readonly minuteStmt: Database.Statement;
  private minutesStmt: Database.Statement | undefined;

  constructor(private readonly db: Database.Database) {
    this.eventsStmt = db.prepare('SELECT * FROM task_events WHERE task_id = ? ORDER BY id');
    this.ledgerStmt = db.prepare(`SELECT ${LEDGER_COLUMNS} FROM ledger WHERE task_id = ? ORDER BY id`);
    this.minuteStmt = db.prepare(channelMinuteUpsert('sqlite'));
  }

  async listTasks(query: AdminTaskQuery): Promise<TaskRecord[]> {
    const { shape, text, values } = adminTaskListSql(query, 'sqlite');
    let stmt = this.listCache.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.listCache.set(shape, stmt);
    }
    return (stmt.all(...values) as TaskRow[]).map(toRecord);
  }

  async taskEvents(taskId: string): Promise<TaskEvent[]> {
    return (this.eventsStmt.all(taskId) as TaskEventRow[]).map(eventOfRow);
  }

  async taskLedger(taskId: string): Promise<LedgerEntry[]> {
    return (this.ledgerStmt.all(taskId) as LedgerRow[]).map(entryOfRow);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { text, values } = usageSql(query, 'sqlite');
    return (this.db.prepare(text).all(...values) as UsageSqlRow[]).map(usageOfRow);
  }

  async taskMinutes(query: TaskMinutesQuery): Promise<TaskMinuteCount[]> {
    const { text, values } = taskMinutesSql(query, 'sqlite');
    this.minutesStmt ??= this.db.prepare(text);
    return (this.minutesStmt.all(...values) as TaskMinuteRow[]).map(taskMinuteOfRow);
  }

  async setChannelState(channel: string, state: ChannelStateRecord['state'], since: number): Promise<void> {
    this.db
      .prepare(`INSERT INTO channel_states (channel, state, since, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (channel) DO UPDATE SET state = excluded.state, since = excluded.since, updated_at = excluded.updated_at`)
      .run(channel, state, since, since);
  }

  async setChannelError(channel: string, error: string, at: number): Promise<void> {
    // a channel's first row may be its error: its circuit then never changed (since 0)
    this.db
      .prepare(`INSERT INTO channel_states (channel, state, since, last_error, last_error_at, updated_at) VALUES (?, 'closed', 0, ?, ?, ?)
      ON CONFLICT (channel) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at, updated_at = excluded.updated_at`)
      .run(channel, error, at, at);
  }

  async addChannelMinutes(rows: readonly ChannelMinute[], forgetBefore: number): Promise<void> {
    this.db
      .transaction(() => {
        for (const r of rows) this.minuteStmt.run(...minuteValues(r));
        this.db.prepare('DELETE FROM channel_minutes WHERE minute < ?').run(forgetBefore);
      })
      .immediate();
  }

  async channelStates(): Promise<ChannelStateRecord[]> {
    return (this.db.prepare('SELECT * FROM channel_states ORDER BY channel').all() as ChannelStateRow[]).map(channelStateOfRow);
  }

  async channelMinutes(since: number): Promise<ChannelMinute[]> {
    return (this.db.prepare('SELECT * FROM channel_minutes WHERE minute >= ? ORDER BY channel, minute').all(since) as ChannelMinuteRow[]).map(minuteOfRow);
  }

  async processingByProvider(): Promise<Record<string, number>> {
    const rows = this.db.prepare(PROCESSING_BY_PROVIDER_SQL).all() as Array<{ provider: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.provider, Number(r.n)]));
  }
}
