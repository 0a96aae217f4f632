import { Type, type Static } from '../typebox.js';
import { closed, TimeQuery } from './admin-common.js';

/**
 * `GET /admin/v1/task-activity` (G370): tasks per minute by status, for the last hour by default:
 * the tasks submitted in each minute and the status changes made in it (the `task_events` rows,
 * G318), every minute of the window listed, zeros included.
 */

export const DEFAULT_ACTIVITY_MINUTES = 60;
/** The most minutes one answer spans: a day. */
export const MAX_ACTIVITY_MINUTES = 1440;
/** What a minute counts: the submits, then each status a task entered. */
export const ACTIVITY_COUNTS = ['submitted', 'queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type ActivityCount = (typeof ACTIVITY_COUNTS)[number];

export const TaskActivityQuerystring = Type.Object(
  {
    minutes: Type.Optional(
      Type.String({ maxLength: 8, description: `How many minutes up to \`to\`, 1 to ${MAX_ACTIVITY_MINUTES} (default ${DEFAULT_ACTIVITY_MINUTES})` }),
    ),
    to: TimeQuery('The end, exclusive, rounded up to a whole minute (default: the end of the current minute)'),
  },
  closed,
);

export const TaskActivityMinute = Type.Object(
  {
    minute: Type.Integer({ description: "The minute's start, Unix seconds" }),
    submitted: Type.Integer({ description: 'Tasks submitted in the minute (queued as they were accepted)' }),
    queued: Type.Integer({ description: 'Tasks put back in the queue in the minute: retries after a failed attempt, a lapsed lease' }),
    processing: Type.Integer({ description: 'Tasks started in the minute (an attempt began)' }),
    completed: Type.Integer({ description: 'Tasks that completed in the minute' }),
    failed: Type.Integer({ description: 'Tasks that failed in the minute' }),
    cancelled: Type.Integer({ description: 'Tasks cancelled in the minute' }),
  },
  { ...closed, title: 'TaskActivityMinute' },
);

export const AdminTaskActivity = Type.Object(
  {
    object: Type.Literal('task_activity'),
    interval: Type.Literal('minute'),
    from: Type.Integer({ description: 'The first minute, Unix seconds' }),
    to: Type.Integer({ description: 'The end, Unix seconds, exclusive' }),
    data: Type.Array(TaskActivityMinute, { description: 'Every minute of [from, to), oldest first, zeros included' }),
  },
  { ...closed, title: 'AdminTaskActivity', description: 'Tasks per minute by status' },
);

export type TaskActivityQuerystring = Static<typeof TaskActivityQuerystring>;
export type TaskActivityMinute = Static<typeof TaskActivityMinute>;
export type AdminTaskActivity = Static<typeof AdminTaskActivity>;
