import { Type, type Static } from '../typebox.js';
import { closed, TimeQuery } from './admin-common.js';
import { StringEnum } from './schema-helpers.js';
import { Nullable } from './task-replies.js';

/** `GET /admin/v1/usage` (G321): sums per time bucket and group, from aggregates kept as tasks end. */

export const USAGE_GROUPS = ['model', 'key', 'account', 'provider'] as const;
export const USAGE_INTERVALS = ['hour', 'day'] as const;
/** The most buckets one answer spans (per group): 31 days of hours, 366 days. */
export const MAX_USAGE_BUCKETS = { hour: 744, day: 366 } as const;

export const UsageQuerystring = Type.Object(
  {
    group_by: Type.Optional(StringEnum(USAGE_GROUPS, { description: 'One row per bucket and model (default), key, account or provider' })),
    interval: Type.Optional(StringEnum(USAGE_INTERVALS, { description: 'Bucket width: hour (default) or day (UTC days)' })),
    from: TimeQuery('The first bucket: this time, rounded down to the interval (default: 24 hours, or 30 days, before `to`)'),
    to: TimeQuery(
      `The end, exclusive, rounded up to the interval (default: now); at most ${MAX_USAGE_BUCKETS.hour} hours or ${MAX_USAGE_BUCKETS.day} days after \`from\``,
    ),
  },
  closed,
);

export const UsageBucket = Type.Object(
  {
    bucket: Type.Integer({ description: "The bucket's start, Unix seconds" }),
    group: Nullable(
      Type.String({ description: "The model, key id, account id or provider; null for what has none (chat replies' provider, keys without an account)" }),
    ),
    submitted: Type.Integer({ description: 'Tasks submitted in the bucket' }),
    completed: Type.Integer({ description: 'Tasks that completed in the bucket' }),
    failed: Type.Integer(),
    cancelled: Type.Integer(),
    video_seconds: Type.Number({ description: 'Seconds of video made by the tasks that completed' }),
    images: Type.Integer({ description: 'Images made by the tasks that completed' }),
    chat_requests: Type.Integer(),
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer(),
    credits_captured: Type.Number({ description: 'Credits captured (charged) in the bucket: tasks and chat requests, as the ledger' }),
  },
  { ...closed, title: 'UsageBucket' },
);

export const AdminUsage = Type.Object(
  {
    object: Type.Literal('usage'),
    group_by: StringEnum(USAGE_GROUPS),
    interval: StringEnum(USAGE_INTERVALS),
    from: Type.Integer({ description: 'Unix seconds' }),
    to: Type.Integer({ description: 'Unix seconds, exclusive' }),
    data: Type.Array(UsageBucket, { description: 'Buckets oldest first, groups in order; a bucket and group with nothing is left out' }),
  },
  { ...closed, title: 'AdminUsage', description: 'Usage per bucket and group' },
);

export type UsageQuerystring = Static<typeof UsageQuerystring>;
export type AdminUsage = Static<typeof AdminUsage>;
