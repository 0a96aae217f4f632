import type { TaskRecord } from '../store/types.js';
import { queueReasonOf, unixSeconds, type ReplyContext } from './reply-context.js';
import type { MotionCreateReply, MotionQueryReply } from '../contract/task-replies.js';

/** `motion` create response: `object` is `video`; `video_url` and `error` null until they apply. */
export function motionCreateReply(task: TaskRecord): MotionCreateReply {
  return {
    id: task.id,
    object: 'video',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    video_url: null,
    error: null,
  };
}

/**
 * `motion` query response (also the cancel response): status may be `cancelled`; `video_url` and
 * `actualDuration` only when completed, `error` only when failed, null otherwise.
 */
export function motionQueryReply(task: TaskRecord, ctx: ReplyContext): MotionQueryReply {
  const completed = task.status === 'completed';
  return {
    id: task.id,
    object: 'video',
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    video_url: completed ? ctx.resultUrl(task, 'video') : null,
    actualDuration: completed ? (task.result?.actualDuration ?? null) : null,
    error: task.status === 'failed' ? task.error : null,
    queue_reason: queueReasonOf(task),
  };
}
