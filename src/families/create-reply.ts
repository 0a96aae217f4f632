import type { FamilyId } from '../contract/families.js';
import type { TaskRecord } from '../store/types.js';
import { clipCreateReply } from './clip.js';
import { modelCenterCreateReply } from './model-center.js';
import { motionCreateReply } from './motion.js';
import { picCreateReply } from './pic.js';
import { reelCreateReply } from './reel.js';
import { videosCreateReply } from './videos.js';
import type { TaskCreateReply } from '../contract/task-replies.js';

const CREATE_REPLIES: Record<FamilyId, (task: TaskRecord) => TaskCreateReply> = {
  pic: picCreateReply,
  clip: clipCreateReply,
  reel: reelCreateReply,
  motion: motionCreateReply,
  videos: videosCreateReply,
  'model-center': modelCenterCreateReply,
};

/**
 * The create response a task was answered with, rebuilt from the stored task as it was when it
 * was committed (queued, no progress): for an Idempotency-Key whose first response was lost.
 */
export function originalCreateReply(task: TaskRecord): TaskCreateReply {
  return CREATE_REPLIES[task.family]({ ...task, status: 'queued', progress: 0, error: null, result: null });
}
