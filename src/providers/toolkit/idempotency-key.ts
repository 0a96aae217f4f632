import type { ProviderJob } from '../types.js';

/** `Idempotency-Key` of a create (G86): the task id for generation 0, `<task id>.<n>` after. */
export function idempotencyKeyOf(job: Pick<ProviderJob, 'taskId' | 'generation'>): string {
  return job.generation === 0 ? job.taskId : `${job.taskId}.${job.generation}`;
}
