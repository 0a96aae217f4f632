/**
 * Rows written and counted the way no gateway code does (G394): tests put tasks straight into a
 * store (any owner, any time, any status to come) and count every row. Not part of the store
 * contract: inserts go through its `insertWithinBound` with no bound; the count is a method the
 * two implementations have outside the contract.
 */
import type { NewTask, TaskRecord, TaskStatus, TaskStore } from '../../src/store/types.js';

const NO_BOUNDS = { maxInFlight: 0, enforceCredits: false } as const;

/** Inserts tasks in one transaction (all or none), as they are given. */
export async function insertTasks(tasks: TaskStore, rows: readonly NewTask[]): Promise<TaskRecord[]> {
  const out = await tasks.insertWithinBound(rows, NO_BOUNDS);
  return out.map((r, i) => {
    if ('refused' in r) throw new Error(`task ${rows[i]!.id} was refused (${r.refused}) with no bound given`);
    return r;
  });
}

/** Inserts one task as it is given. */
export async function insertTask(tasks: TaskStore, row: NewTask): Promise<TaskRecord> {
  return (await insertTasks(tasks, [row]))[0]!;
}

/** How many tasks the store holds in each status, over every owner. */
export function countTasksByStatus(tasks: TaskStore): Promise<Record<TaskStatus, number>> {
  const counting = tasks as TaskStore & { countByStatus?: () => Promise<Record<TaskStatus, number>> };
  if (typeof counting.countByStatus !== 'function') throw new Error('this task store cannot count its rows (countByStatus)');
  return counting.countByStatus();
}
