import type { TaskRecord } from '../store/types.js';
import { queueReasonOf, unixSeconds, type ReplyContext } from './reply-context.js';
import type { PicCreateReply, PicQueryReply } from '../contract/task-replies.js';

/** `pic` create response: `object` is `image` (docs/reference/api/pic.md#replies). */
export function picCreateReply(task: TaskRecord): PicCreateReply {
  return {
    id: task.id,
    object: 'image',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    error: task.error,
  };
}

/** `pic` query response: `object` is `image.generation`; `image_url` and `error` null until they apply. */
export function picQueryReply(task: TaskRecord, ctx: ReplyContext): PicQueryReply {
  return {
    id: task.id,
    object: 'image.generation',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    image_url: task.status === 'completed' ? ctx.resultUrl(task, 'image') : null,
    error: task.status === 'failed' ? task.error : null,
    queue_reason: queueReasonOf(task),
  };
}
