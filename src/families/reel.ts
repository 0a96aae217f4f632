import type { TaskRecord } from '../store/types.js';
import { actualDurationOf } from './clip.js';
import { queueReasonOf, unixSeconds, type ReplyContext } from './reply-context.js';
import type { ReelCreateReply, ReelQueryReply } from '../contract/task-replies.js';

/** `reel` create response (both forms): `object` `video.generation`, `video_url` null, plus progress. */
export function reelCreateReply(task: TaskRecord): ReelCreateReply {
  return {
    id: task.id,
    object: 'video.generation',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    video_url: null,
    error: task.error,
  };
}

/** `reel` query response: `video_url` and `error` null until they apply; `actualDuration` once completed. */
export function reelQueryReply(task: TaskRecord, ctx: ReplyContext): ReelQueryReply {
  const actualDuration = actualDurationOf(task);
  return {
    id: task.id,
    object: 'video.generation',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    video_url: task.status === 'completed' ? ctx.resultUrl(task, 'video') : null,
    error: task.status === 'failed' ? task.error : null,
    queue_reason: queueReasonOf(task),
    ...(actualDuration !== undefined && { actualDuration }),
  };
}
