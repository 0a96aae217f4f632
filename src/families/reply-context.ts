import type { TaskRecord } from '../store/types.js';

/** What reply shaping needs beyond the task: signed URLs for its result files. */
export interface ReplyContext {
  /** Signed, expiring URL of the task's first result file of this content kind, or null. */
  resultUrl(task: TaskRecord, kind?: 'image' | 'video' | 'audio'): string | null;
}

/** Unix seconds (D12). */
export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);

/** Why a queued task waits, when the gateway knows (G274): no upstream of its model takes calls now. */
export type QueueReason = 'upstream_unavailable';

/** A query reply's `queue_reason`: `upstream_unavailable` while the task waits queued for a channel to take it, else null. */
export function queueReasonOf(task: TaskRecord): QueueReason | null {
  return task.status === 'queued' && task.upstream?.unavailableSince !== undefined ? 'upstream_unavailable' : null;
}
