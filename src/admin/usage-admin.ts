/**
 * `GET /admin/v1/usage` (G321): sums of the hourly aggregates the store keeps as tasks are
 * submitted and end, as chat replies are recorded and as credits are captured (store triggers,
 * G318). The answer reads those rows only, never the tasks: its cost grows with the buckets and
 * groups asked for, not with the tasks stored.
 */
import { MAX_USAGE_BUCKETS, type AdminUsage, type UsageQuerystring } from '../contract/admin-usage.js';
import { toCredits } from '../credits/money.js';
import { invalidField } from '../errors.js';
import type { AdminStore } from '../store/types.js';
import { parseTimeParam } from '../tasks/task-list.js';

const WIDTH = { hour: 3_600_000, day: 86_400_000 } as const;

export async function readUsage(admin: Pick<AdminStore, 'usage'>, query: UsageQuerystring, now: number): Promise<AdminUsage> {
  const groupBy = query.group_by ?? 'model';
  const interval = query.interval ?? 'hour';
  const width = WIDTH[interval];
  const ceil = (ms: number): number => Math.ceil(ms / width) * width;
  const to = ceil(query.to === undefined ? now : parseTimeParam('to', query.to));
  const from = Math.floor((query.from === undefined ? to - (interval === 'hour' ? 24 : 30) * width : parseTimeParam('from', query.from)) / width) * width;
  if (from >= to) throw invalidField('from', 'from must be before to');
  if ((to - from) / width > MAX_USAGE_BUCKETS[interval]) {
    throw invalidField('from', `from and to may be at most ${MAX_USAGE_BUCKETS[interval]} ${interval}s apart (ask for interval=day, or several ranges)`);
  }
  const rows = await admin.usage({ groupBy, interval, from, to });
  return {
    object: 'usage',
    group_by: groupBy,
    interval,
    from: from / 1000,
    to: to / 1000,
    data: rows.map((r) => ({
      bucket: r.bucket / 1000,
      group: r.group === '' ? null : r.group,
      submitted: r.submitted,
      completed: r.completed,
      failed: r.failed,
      cancelled: r.cancelled,
      video_seconds: r.videoSeconds,
      images: r.images,
      chat_requests: r.chatRequests,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      credits_captured: toCredits(r.capturedMicro),
    })),
  };
}
