import type { TaskRecord } from '../store/types.js';
import { unixSeconds, type ReplyContext } from './reply-context.js';

/** `pic` create response: `object` is `image` (interface.md, image task). */
export function picCreateReply(task: TaskRecord): Record<string, unknown> {
  return {
    id: task.id, object: 'image', created: unixSeconds(task.createdAt), model: task.model,
    status: task.status, progress: task.progress, error: task.error,
  };
}

/** `pic` query response: `object` is `image.generation`; `image_url` and `error` null until they apply. */
export function picQueryReply(task: TaskRecord, ctx: ReplyContext): Record<string, unknown> {
  return {
    id: task.id, object: 'image.generation', created: unixSeconds(task.createdAt), model: task.model,
    status: task.status, progress: task.progress,
    image_url: task.status === 'completed' ? ctx.resultUrl(task, 'image') : null,
    error: task.status === 'failed' ? task.error : null,
  };
}
