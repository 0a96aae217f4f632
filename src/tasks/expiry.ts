import { retentionFor } from '../contract/catalog.js';
import type { FamilyId } from '../contract/families.js';

/**
 * When a finished task's retention ends (D20): its result files go, and for families
 * whose tasks are deleted (motion) the task goes too. Null: nothing to sweep.
 */
export function expiryOf(family: FamilyId, status: 'completed' | 'failed' | 'cancelled', finishedAt: number, videosResultTtlHours: number): number | null {
  const retention = retentionFor(family, videosResultTtlHours);
  if (status === 'completed' || retention.deleteTask) return finishedAt + retention.resultMs;
  return null;
}
