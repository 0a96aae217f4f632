import type { FamilyId } from '../contract/families.js';
import type { TaskRecord } from '../store/types.js';
import { clipQueryReply } from './clip.js';
import { modelCenterReply } from './model-center.js';
import { motionQueryReply } from './motion.js';
import { picQueryReply } from './pic.js';
import { reelQueryReply } from './reel.js';
import type { ReplyContext } from './reply-context.js';
import { videosQueryReply } from './videos.js';
import type { TaskQueryReply } from '../contract/task-replies.js';

type QueryShaper = (task: TaskRecord, ctx: ReplyContext) => TaskQueryReply;

/** Query reply shaper per family: any query path answers for any task of the caller (D4). */
const QUERY_REPLIES: Record<FamilyId, QueryShaper> = {
  pic: picQueryReply,
  clip: clipQueryReply,
  reel: reelQueryReply,
  motion: motionQueryReply,
  videos: videosQueryReply,
  'model-center': modelCenterReply,
};

export function queryReply(task: TaskRecord, ctx: ReplyContext): TaskQueryReply {
  return QUERY_REPLIES[task.family](task, ctx);
}
