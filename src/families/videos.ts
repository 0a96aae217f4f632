import type { TaskRecord } from '../store/types.js';
import { motionQueryReply } from './motion.js';
import type { ReplyContext } from './reply-context.js';
import type { MotionQueryReply, VideosCreateReply } from '../contract/task-replies.js';

/**
 * `videos` create response: the envelope `{code: "0", msg: null, data: {projectId}}`
 * (docs/reference/api/videos.md#replies: `0` means success; `msg` carries a reason only on failure).
 */
export function videosCreateReply(task: TaskRecord): VideosCreateReply {
  return { code: '0', msg: null, data: { projectId: task.id } };
}

/**
 * `videos` query response (via `/v1/result/{id}`, id = projectId): the same shape as a motion
 * query (`object: video`, `video_url` and `actualDuration` only when completed).
 */
export const videosQueryReply: (task: TaskRecord, ctx: ReplyContext) => MotionQueryReply = motionQueryReply;
