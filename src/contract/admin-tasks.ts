import { Type, type Static } from '../typebox.js';
import { AdminList, closed, Created, PagingQuery, TimeQuery } from './admin-common.js';
import { FAMILIES } from './families.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable, TaskQueryReply } from './task-replies.js';

/** Every tenant's tasks in the admin API (G317-G320). Times are Unix seconds; amounts credits. */

export const TASK_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
const Status = (description: string) => StringEnum(TASK_STATUSES, { description });
const Seconds = (description: string) => Nullable(Type.Integer({ description: `${description}, Unix seconds` }));

export const AdminTask = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('admin_task'),
    key_id: Type.String({ description: 'The key that submitted it' }),
    account_id: Nullable(Type.String({ description: 'The account whose credits it spends' })),
    family: StringEnum(FAMILIES),
    form: Nullable(Type.String({ description: 'A or B for clip and reel; null otherwise' })),
    model: Type.String(),
    provider: Type.String({ description: 'The provider (channel) it is at, or made its result' }),
    status: Status('queued, processing, completed, failed or cancelled'),
    progress: Type.Integer(),
    attempt_count: Type.Integer({ description: "Attempts started (the gateway's own faults give theirs back)" }),
    error: Nullable(Type.String({ description: 'Why it failed, as its caller sees it' })),
    credits: Type.Number({ description: 'The price at submit, credits' }),
    created: Created,
    started: Seconds('When its first attempt started'),
    finished: Seconds('When it ended'),
  },
  { ...closed, title: 'AdminTask', description: 'A task of any tenant' },
);
export const AdminTaskList = AdminList(AdminTask, 'AdminTaskList', 'tasks');

export const AdminTaskAttempt = Type.Object(
  {
    attempt: Type.Integer({ description: 'Its number (1 the first)' }),
    provider: Type.String({ description: 'The channel it started at' }),
    started: Type.Integer({ description: 'Unix seconds' }),
    ended: Seconds('When it ended (null: still running)'),
    outcome: Nullable(
      StringEnum(['completed', 'failed', 'cancelled', 'requeued'] as const, {
        description: 'How it ended: requeued is a retry, a new generation, or the gateway giving the attempt back',
      }),
    ),
    error: Nullable(Type.String({ description: 'Why it ended, when it did not complete' })),
  },
  { ...closed, title: 'AdminTaskAttempt' },
);

export const AdminTaskEvent = Type.Object(
  {
    at: Type.Integer({ description: 'Unix seconds' }),
    at_ms: Type.Integer({ description: 'Unix milliseconds (the order of changes within a second)' }),
    from: Nullable(Status('The status it left; null for the submit')),
    status: Status('The status it entered'),
    attempt: Type.Integer(),
    provider: Type.String(),
    error: Nullable(Type.String()),
  },
  { ...closed, title: 'AdminTaskEvent', description: 'One status change' },
);

export const AdminTaskLedgerEntry = Type.Object(
  {
    kind: StringEnum(['hold', 'capture', 'release'] as const),
    amount: Type.Number({ description: 'Credits' }),
    created: Created,
  },
  { ...closed, title: 'AdminTaskLedgerEntry' },
);

export const AdminWebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'The webhook-id' }),
    url: Type.String(),
    status: StringEnum(['pending', 'delivered', 'failed'] as const),
    attempts: Type.Array(
      Type.Object(
        {
          at: Type.Integer({ description: 'Unix seconds' }),
          status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when none came" })),
          error: Nullable(Type.String()),
          duration_ms: Type.Number(),
        },
        closed,
      ),
    ),
    next_attempt_at: Seconds('When it is tried next'),
    created: Created,
  },
  { ...closed, title: 'AdminWebhookDelivery' },
);

export const AdminTaskDetail = Type.Object(
  {
    ...AdminTask.properties,
    object: Type.Literal('admin_task'),
    view: TaskQueryReply,
    cancellable: Type.Boolean({
      description:
        'Whether the operator cancel (POST /admin/v1/tasks/{id}/cancel) would cancel it now: queued, or processing where its provider can stop a generation (G319)',
    }),
    request: Type.Record(Type.String(), Type.Unknown(), { description: 'The request as accepted: validated and normalised, defaults applied' }),
    upstream: Nullable(
      Type.Object(
        {
          provider_type: Nullable(Type.String({ description: "The channel's type (relay, fal, ...); null for a provider of no known type" })),
          channel: Type.String({ description: 'The provider (channel) id' }),
          task_id: Nullable(Type.String({ description: "The upstream's id of the current generation" })),
          generation: Type.Integer({ description: '0 the first generation; one more after each that failed' }),
        },
        closed,
      ),
    ),
    attempts: Type.Array(AdminTaskAttempt, { description: 'Each attempt: start, end, outcome, error' }),
    hold: Nullable(
      Type.Object(
        {
          amount: Type.Number({ description: 'Held at submit, credits' }),
          settlement: Nullable(AdminTaskLedgerEntry),
        },
        closed,
      ),
    ),
    ledger: Type.Array(AdminTaskLedgerEntry, { description: "The task's ledger entries: its hold and the capture or release of it" }),
    webhooks: Type.Array(AdminWebhookDelivery),
    timeline: Type.Array(AdminTaskEvent, { description: 'Every status change, oldest first, the submit first' }),
  },
  { ...closed, title: 'AdminTaskDetail', description: 'A task as its caller sees it (`view`) and what only an operator may see' },
);

export const TaskListAdminQuerystring = Type.Object(
  {
    key_id: Type.Optional(Type.String({ maxLength: 128, description: 'Only tasks of this key' })),
    account_id: Type.Optional(Type.String({ maxLength: 128, description: 'Only tasks of the keys of this account' })),
    family: Type.Optional(StringEnum(FAMILIES, { description: 'Only tasks of this family' })),
    model: Type.Optional(Type.String({ maxLength: 128, description: 'Only tasks of this model (exact)' })),
    status: Type.Optional(Status('Only tasks in this status')),
    provider: Type.Optional(Type.String({ maxLength: 128, description: 'Only tasks at this provider (channel)' })),
    created_after: TimeQuery('Only tasks created after this time'),
    created_before: TimeQuery('Only tasks created before this time'),
    ...PagingQuery,
  },
  closed,
);

export type AdminTask = Static<typeof AdminTask>;
export type AdminTaskList = Static<typeof AdminTaskList>;
export type AdminTaskDetail = Static<typeof AdminTaskDetail>;
export type AdminTaskAttempt = Static<typeof AdminTaskAttempt>;
export type AdminTaskEvent = Static<typeof AdminTaskEvent>;
export type TaskListAdminQuerystring = Static<typeof TaskListAdminQuerystring>;
