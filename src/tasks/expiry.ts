import { retentionFor, type FamilyId } from '../contract/catalog.js';

/**
 * When a finished task's retention ends (decisions.md #20): its result files go, and for families
 * whose tasks are deleted (motion) the task goes too. Null: nothing to sweep.
 */
export function expiryOf(family: string, status: 'completed' | 'failed' | 'cancelled', finishedAt: number, videosResultTtlHours: number): number | null {
  const retention = retentionFor(family as FamilyId, videosResultTtlHours);
  if (status === 'completed' || retention.deleteTask) return finishedAt + retention.resultMs;
  return null;
}
