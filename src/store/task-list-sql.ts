/** The `listTasks` statement, shared by the SQLite and PostgreSQL stores (same columns, row values in both). */
import type { TaskListQuery } from './types.js';

/**
 * The statement for `query`, with its placeholders written by `mark` (`?` or `$n`), and a name for
 * its shape (which filters, how many values in each list), so each shape is prepared once.
 * Reads the index `tasks_owner_created` (owner_key_id, created_at, id) backwards.
 */
export function taskListSql(query: TaskListQuery, mark: (n: number) => string): { shape: string; text: string; values: unknown[] } {
  const values: unknown[] = [];
  const next = (v: unknown): string => {
    values.push(v);
    return mark(values.length);
  };
  const where = [`owner_key_id = ${next(query.ownerKeyId)}`];
  const statuses = query.statuses ?? [];
  const families = query.families ?? [];
  if (statuses.length > 0) where.push(`status IN (${statuses.map(next).join(', ')})`);
  if (families.length > 0) where.push(`family IN (${families.map(next).join(', ')})`);
  if (query.model !== undefined) where.push(`model = ${next(query.model)}`);
  if (query.createdAfter !== undefined) where.push(`created_at > ${next(query.createdAfter)}`);
  if (query.before) where.push(`(created_at, id) < (${next(query.before.createdAt)}, ${next(query.before.id)})`);
  const limit = next(query.limit);
  const shape = `${statuses.length}.${families.length}.${query.model !== undefined ? 1 : 0}.${query.createdAfter !== undefined ? 1 : 0}.${query.before ? 1 : 0}`;
  return { shape, text: `SELECT * FROM tasks WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${limit}`, values };
}
