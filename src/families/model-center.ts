import { findModelCenterModel } from '../contract/model-center-catalog.js';
import type { TaskRecord } from '../store/types.js';
import { queueReasonOf, unixSeconds, type ReplyContext } from './reply-context.js';
import type { ModelCenterReply } from '../contract/task-replies.js';

/** What a Model Center task makes: `image` for the imagegen group, `video` for the rest. */
export function modelCenterKind(task: TaskRecord): 'image' | 'video' {
  const known = findModelCenterModel(task.model)?.kind;
  if (known) return known;
  return task.request.output.kind;
}

/**
 * The flat Model Center task object (docs/reference/api/model-center.md#replies), the same for
 * create and query: `result_url` and the typed URL (`video_url`, or `image_url` for imagegen
 * models) and `actualDuration` are null until completed, `error` until failed. `upstream_url` and
 * `upstream_urls` ("may be returned") never are: results are re-hosted, and where they came from
 * stays with the operator (G88).
 */
export function modelCenterReply(task: TaskRecord, ctx: ReplyContext): ModelCenterReply {
  const done = task.status === 'completed';
  const created = unixSeconds(task.createdAt);
  const tail = {
    amount: task.amount,
    actualDuration: done ? (task.result?.actualDuration ?? null) : null,
    error: task.status === 'failed' ? task.error : null,
    queue_reason: queueReasonOf(task),
  };
  if (modelCenterKind(task) === 'image') {
    const url = done ? ctx.resultUrl(task, 'image') : null;
    return { id: task.id, object: 'image', created, model: task.model, status: task.status, progress: task.progress, result_url: url, image_url: url, ...tail };
  }
  const url = done ? ctx.resultUrl(task, 'video') : null;
  return { id: task.id, object: 'video', created, model: task.model, status: task.status, progress: task.progress, result_url: url, video_url: url, ...tail };
}

const NO_LINKS: ReplyContext = { resultUrl: () => null };

/** Create response: the task object of a task that has just been queued. */
export function modelCenterCreateReply(task: TaskRecord): ModelCenterReply {
  return modelCenterReply(task, NO_LINKS);
}
