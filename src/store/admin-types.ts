/** The operator's cross-tenant reads, usage aggregates and channel figures (G317-G324). Part of the store contract (types.ts). */
import type { FamilyId } from '../contract/families.js';
import type { LedgerEntry } from './credit-types.js';
import type { TaskRecord, TaskStatus } from './task-types.js';

/** What `AdminStore.listTasks` reads: every tenant's tasks, newest first (keyset pagination on (createdAt, id)). */
export interface AdminTaskQuery {
  keyId?: string;
  /** Tasks of the keys of this account. */
  accountId?: string;
  family?: FamilyId;
  model?: string;
  status?: TaskStatus;
  provider?: string;
  /** Unix ms, exclusive. */
  createdAfter?: number;
  /** Unix ms, exclusive. */
  createdBefore?: number;
  before?: { createdAt: number; id: string };
  limit: number;
}

/** One status change of a task (G318), written by the store in the transaction of the change. */
export interface TaskEvent {
  id: number;
  taskId: string;
  /** Unix ms. */
  at: number;
  /** The status it left; null for the submit (which is no row: the task's createdAt). */
  from: TaskStatus | null;
  status: TaskStatus;
  /** The task's attempts at that moment (a start counts one more). */
  attempt: number;
  /** The provider (channel) the task named at that moment. */
  provider: string;
  /** The upstream generation it left, if any. */
  upstreamId: string | null;
  /** The task's error (failed), or the error of the attempt that ended (a retry). */
  error: string | null;
}

export type UsageGroup = 'model' | 'key' | 'account' | 'provider';

/** What `AdminStore.usage` reads (G321): hourly or daily aggregates summed per bucket and group, buckets in [from, to). */
export interface UsageQuery {
  groupBy: UsageGroup;
  interval: 'hour' | 'day';
  /** Unix ms, a whole hour (inclusive). */
  from: number;
  /** Unix ms, a whole hour (exclusive). */
  to: number;
}

export interface UsageRow {
  /** The bucket's start, Unix ms. */
  bucket: number;
  /** The model, key id, account id or provider ('' for chat replies' provider and tasks without an account). */
  group: string;
  submitted: number;
  completed: number;
  failed: number;
  cancelled: number;
  videoSeconds: number;
  images: number;
  chatRequests: number;
  promptTokens: number;
  completionTokens: number;
  capturedMicro: number;
}

/** What `AdminStore.taskMinutes` reads (G370): minutes in [from, to), Unix ms, whole minutes. */
export interface TaskMinutesQuery {
  from: number;
  to: number;
}

/** How many tasks were submitted, or entered `status`, in one minute (G370). Minutes with none have no row. */
export interface TaskMinuteCount {
  /** The minute's start, Unix ms. */
  minute: number;
  status: 'submitted' | TaskStatus;
  count: number;
}

/** A channel's circuit as last changed by any process, and its last error (G322). */
export interface ChannelStateRecord {
  channel: string;
  state: 'closed' | 'open' | 'half-open';
  /** Unix ms of the change to `state`; 0 when the circuit never changed (the row holds an error only). */
  since: number;
  /** Scrubbed. */
  lastError: string | null;
  lastErrorAt: number | null;
  updatedAt: number;
}

/** A channel's call outcomes in one minute, added up by every process (G322). */
export interface ChannelMinute {
  channel: string;
  /** The minute's start, Unix ms. */
  minute: number;
  ok: number;
  faults: number;
  errors: number;
  refused: number;
  /** Calls that went out and whose length is in `seconds`. */
  callsTimed: number;
  seconds: number;
}

/** The operator's reads across tenants and the cluster's shared channel figures (G317-G324). */
export interface AdminStore {
  listTasks(query: AdminTaskQuery): Promise<TaskRecord[]>;
  /** A task's status changes, oldest first. */
  taskEvents(taskId: string): Promise<TaskEvent[]>;
  /** A task's ledger entries (its hold, and the capture or release of it), oldest first. */
  taskLedger(taskId: string): Promise<LedgerEntry[]>;
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /**
   * Tasks per minute by status (G370): submits counted from the tasks' creation times, status
   * changes from `task_events`, each read through an index on its time.
   */
  taskMinutes(query: TaskMinutesQuery): Promise<TaskMinuteCount[]>;
  /** Records a change of a channel's circuit (the last writer of any process wins). */
  setChannelState(channel: string, state: ChannelStateRecord['state'], since: number): Promise<void>;
  setChannelError(channel: string, error: string, at: number): Promise<void>;
  /** Adds outcomes to each channel's minute rows, and forgets minutes before `forgetBefore`. */
  addChannelMinutes(rows: readonly ChannelMinute[], forgetBefore: number): Promise<void>;
  channelStates(): Promise<ChannelStateRecord[]>;
  /** Minute rows from `since` on (Unix ms), every channel. */
  channelMinutes(since: number): Promise<ChannelMinute[]>;
  /** Processing tasks per provider, every process. */
  processingByProvider(): Promise<Record<string, number>>;
}
