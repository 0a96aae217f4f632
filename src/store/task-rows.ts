/** The `tasks` table's row shape and its mapping to records, shared by the SQLite and PostgreSQL stores (same columns). */
import type { FamilyForm, FamilyId } from '../contract/families.js';
import { mediaRefs } from '../contract/media-refs.js';
import type { TaskRequest } from '../contract/task-request.js';
import type { NewTask, TaskPatchWithNote, TaskRecord, TaskStatus } from './types.js';

/** A `tasks` row (PostgreSQL's bigint columns are read as numbers, see postgres/connect.ts). */
export interface TaskRow {
  id: string;
  owner_key_id: string;
  family: FamilyId;
  form: FamilyForm;
  model: string;
  provider: string;
  request: string;
  status: TaskStatus;
  progress: number;
  result: string | null;
  error: string | null;
  amount: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  attempts: number;
  server_faults: number;
  vtime: number;
  upstream: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  run_after: number;
  expires_at: number | null;
  account_id: string | null;
  hold_micro: number | null;
  per_second_micro: number | null;
  callback_url: string | null;
}

/** A row as a TaskRecord. `request` is parsed on first use: the poll path rarely needs it. */
export function toRecord(row: TaskRow): TaskRecord {
  let request: TaskRequest | undefined;
  return {
    id: row.id,
    ownerKeyId: row.owner_key_id,
    family: row.family,
    form: row.form,
    model: row.model,
    provider: row.provider,
    get request(): TaskRequest {
      if (request === undefined) {
        const parsed = JSON.parse(row.request) as TaskRequest;
        request = { ...parsed, media: parsed.media ?? mediaRefs() }; // tasks stored before media review had none
      }
      return request;
    },
    status: row.status,
    progress: row.progress,
    result: row.result === null ? null : JSON.parse(row.result),
    error: row.error,
    amount: row.amount,
    charge:
      row.account_id === null
        ? null
        : {
            accountId: row.account_id,
            holdMicro: Number(row.hold_micro ?? 0),
            perSecondMicro: row.per_second_micro === null ? null : Number(row.per_second_micro),
          },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    attempts: row.attempts,
    serverFaults: row.server_faults,
    upstream: row.upstream === null ? null : JSON.parse(row.upstream),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    runAfter: row.run_after,
    expiresAt: row.expires_at,
    callbackUrl: row.callback_url ?? null,
  };
}

/** A new task as the INSERT leaves it (the column defaults), without reading it back. */
export function insertedRecord(task: NewTask): TaskRecord {
  return {
    id: task.id,
    ownerKeyId: task.ownerKeyId,
    family: task.family,
    form: task.form,
    model: task.model,
    provider: task.provider,
    request: task.request,
    amount: task.amount,
    charge: task.charge ?? null,
    createdAt: task.createdAt,
    status: 'queued',
    progress: 0,
    result: null,
    error: null,
    updatedAt: task.createdAt,
    startedAt: null,
    finishedAt: null,
    attempts: 0,
    serverFaults: 0,
    upstream: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    runAfter: 0,
    expiresAt: null,
    callbackUrl: task.callbackUrl ?? null,
  };
}

export const PATCH_COLUMNS: Record<keyof TaskPatchWithNote, string> = {
  attempts: 'attempts',
  serverFaults: 'server_faults',
  status: 'status',
  progress: 'progress',
  result: 'result',
  error: 'error',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  leaseOwner: 'lease_owner',
  leaseExpiresAt: 'lease_expires_at',
  runAfter: 'run_after',
  expiresAt: 'expires_at',
  provider: 'provider',
  upstream: 'upstream',
  attemptError: 'attempt_error',
};

/** A patch field's column value: JSON documents as text. */
export function columnValue(patch: TaskPatchWithNote, key: keyof TaskPatchWithNote): unknown {
  const value = patch[key];
  if (key === 'result' || key === 'upstream') return value === null ? null : JSON.stringify(value);
  return value;
}

/** The in-flight tasks by family, model and status (through the tasks_in_flight partial index). */
export const LIVE_COUNTS_SQL =
  "SELECT family, model, status, COUNT(*) AS n, MIN(created_at) AS oldest FROM tasks WHERE status IN ('queued', 'processing') GROUP BY family, model, status";
