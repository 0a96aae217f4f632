/**
 * `GET /admin/v1/task-activity` (G370): tasks per minute by status over the last `minutes` (60 by
 * default) up to `to` (the end of the current minute): the submits and the status changes of each minute, read by the store
 * through indexes on their times, every minute listed (zeros included) so a chart has no gaps.
 */
import {
  DEFAULT_ACTIVITY_MINUTES,
  MAX_ACTIVITY_MINUTES,
  type AdminTaskActivity,
  type TaskActivityMinute,
  type TaskActivityQuerystring,
} from '../contract/admin-task-activity.js';
import type { AdminStore } from '../store/types.js';
import { parseTimeParam } from '../tasks/task-list.js';
import { parseWholeParam } from './paging.js';

const MINUTE = 60_000;

export async function readTaskActivity(admin: Pick<AdminStore, 'taskMinutes'>, query: TaskActivityQuerystring, now: number): Promise<AdminTaskActivity> {
  const minutes = parseWholeParam('minutes', query.minutes, DEFAULT_ACTIVITY_MINUTES, MAX_ACTIVITY_MINUTES);
  // the end: `to` rounded up to a whole minute, or the end of the current minute (which holds `now`)
  const to = query.to === undefined ? Math.floor(now / MINUTE) * MINUTE + MINUTE : Math.ceil(parseTimeParam('to', query.to) / MINUTE) * MINUTE;
  const from = to - minutes * MINUTE;
  const data: TaskActivityMinute[] = [];
  for (let m = from; m < to; m += MINUTE) data.push({ minute: m / 1000, submitted: 0, queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 });
  for (const row of await admin.taskMinutes({ from, to })) {
    const slot = data[(row.minute - from) / MINUTE];
    if (slot) slot[row.status] += row.count;
  }
  return { object: 'task_activity', interval: 'minute', from: from / 1000, to: to / 1000, data };
}
