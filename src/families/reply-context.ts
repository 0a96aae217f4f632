import type { TaskRecord } from '../store/types.js';

/** What reply shaping needs beyond the task: signed URLs for its result files. */
export interface ReplyContext {
  /** Signed, expiring URL of the task's first result file of this content kind, or null. */
  resultUrl(task: TaskRecord, kind?: 'image' | 'video' | 'audio'): string | null;
}

/** Unix seconds (D12). */
export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);
