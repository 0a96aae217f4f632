/** The route of a task: where its starts go. */
import type { RouteCandidate } from '../contract/task-request.js';
import type { TaskRecord } from '../store/types.js';

/** The route of a task: the candidates of its model when it was submitted, else its own provider. */
export function routeOf(task: TaskRecord): RouteCandidate[] {
  return task.request.route ?? [{ provider: task.provider, priority: 0, weight: 1 }];
}
