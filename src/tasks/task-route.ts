/** The route of a task: where its starts go. */
import type { RouteCandidate } from '../providers/channels.js';
import type { TaskRecord } from '../store/types.js';

/** The route of a task: the candidates of its model when it was submitted, else its own provider. */
export function routeOf(task: TaskRecord): RouteCandidate[] {
  return task.request.route ?? [{ provider: task.provider, priority: 0, weight: 1 }];
}
