/**
 * The task list's query (G216-G218): filters read from the query string, and the opaque cursor.
 * A cursor is base64url of `[created_at ms, id, filters digest]`: the position of the last item
 * of its page, and a digest of the filters it was made under, so a cursor reused with other
 * filters (or altered into something that does not decode) is a 400 naming `cursor`. A cursor
 * altered into another valid position only moves within the caller's own tasks: the owner is
 * always part of the query.
 */
import { createHash } from 'node:crypto';
import { FAMILIES, type FamilyId } from '../contract/families.js';
import { AppError } from '../errors.js';
import type { TaskListQuery, TaskStatus } from '../store/types.js';

export const TASK_STATUSES: readonly TaskStatus[] = ['queued', 'processing', 'completed', 'failed', 'cancelled'];
export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

/** The query string as the route's schema lets it through (every value a string). */
export interface TaskListParams {
  status?: string;
  family?: string;
  model?: string;
  created_after?: string;
  limit?: string;
  cursor?: string;
}

const bad = (param: string, message: string): AppError => new AppError('invalid_request', message, { param });

/** A comma-separated list of allowed words, each once at most. */
function listOf<T extends string>(param: string, value: string | undefined, allowed: readonly T[]): T[] | undefined {
  if (value === undefined) return undefined;
  const words = value.split(',');
  for (const w of words) {
    if (!(allowed as readonly string[]).includes(w)) throw bad(param, `${param} must be a comma-separated list of: ${allowed.join(', ')} (got "${w}")`);
  }
  return [...new Set(words)] as T[];
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/** An ISO-8601 date-time with a zone that names a real moment: no February 30th, no 24:00 (`Date.parse` rolls both over). */
function isCalendarDateTime(value: string): boolean {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return false;
  // absent parts (seconds, a Z zone's offset) are 0
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, zoneHours = 0, zoneMinutes = 0] = m.slice(1).map((v) => Number(v ?? 0));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate(); // day 0 of the next month
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && zoneHours <= 23 && zoneMinutes <= 59;
}

/** A time parameter (`param`): Unix seconds (digits) or an ISO-8601 date-time with a time zone; Unix ms out. */
export function parseTimeParam(param: string, value: string): number {
  if (/^[0-9]{1,12}$/.test(value)) return Number(value) * 1000;
  const ms = isCalendarDateTime(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms))
    throw bad(param, `${param} must be Unix seconds (such as 1700000000) or an ISO-8601 date-time with a time zone (such as 2026-01-31T12:00:00Z)`);
  return ms;
}

/** `created_after`: see {@link parseTimeParam}. */
export const parseCreatedAfter = (value: string): number => parseTimeParam('created_after', value);

function filtersDigest(q: Omit<TaskListQuery, 'ownerKeyId' | 'before' | 'limit'>): string {
  const text = JSON.stringify([
    q.statuses ? [...q.statuses].sort() : null,
    q.families ? [...q.families].sort() : null,
    q.model ?? null,
    q.createdAfter ?? null,
  ]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

export function encodeCursor(createdAt: number, id: string, digest: string): string {
  return Buffer.from(JSON.stringify([createdAt, id, digest])).toString('base64url');
}

function decodeCursor(cursor: string, digest: string): { createdAt: number; id: string } {
  const invalid = bad('cursor', 'cursor is not a cursor this list returned (use next_cursor as it came, with the same filters)');
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid;
  const [createdAt, id, d] = parsed as unknown[];
  if (!Number.isSafeInteger(createdAt) || (createdAt as number) < 0 || typeof id !== 'string' || id.length === 0 || id.length > 128 || /\p{Cc}/u.test(id))
    throw invalid;
  if (d !== digest) throw bad('cursor', 'cursor was made for other filters: send the same status, family, model and created_after as the first page');
  return { createdAt: createdAt as number, id };
}

/** The store query for a caller's list request (`limit + 1` rows are read to know whether more follow), and the digest for its next cursor. */
export function taskListQuery(ownerKeyId: string, params: TaskListParams): { query: TaskListQuery; limit: number; digest: string } {
  const limit = params.limit === undefined ? DEFAULT_LIST_LIMIT : Number(params.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT || !/^[0-9]+$/.test(params.limit ?? '1')) {
    throw bad('limit', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  }
  const statuses = listOf('status', params.status, TASK_STATUSES);
  const families = listOf<FamilyId>('family', params.family, FAMILIES);
  if (params.model !== undefined && (params.model.length === 0 || params.model.length > 128)) throw bad('model', 'model must be 1 to 128 characters long');
  if (params.model !== undefined && /\p{Cc}/u.test(params.model)) throw bad('model', 'model must not contain control characters');
  const createdAfter = params.created_after === undefined ? undefined : parseCreatedAfter(params.created_after);
  const filters = {
    ...(statuses && { statuses }),
    ...(families && { families }),
    ...(params.model !== undefined && { model: params.model }),
    ...(createdAfter !== undefined && { createdAfter }),
  };
  const digest = filtersDigest(filters);
  const before = params.cursor === undefined ? undefined : decodeCursor(params.cursor, digest);
  return { query: { ownerKeyId, ...filters, ...(before && { before }), limit: limit + 1 }, limit, digest };
}
