import type { TaskRecord } from '../store/types.js';
import { picQueryReply } from './pic.js';
import { clipQueryReply } from './clip.js';
import { reelQueryReply } from './reel.js';
import { motionQueryReply } from './motion.js';
import { videosQueryReply } from './videos.js';
import { modelCenterReply } from './model-center.js';
import type { ReplyContext } from './reply-context.js';

type QueryShaper = (task: TaskRecord, ctx: ReplyContext) => Record<string, unknown>;

/** Query reply shaper per family: any query path answers for any task of the caller (decisions.md #4). */
const QUERY_REPLIES: Record<string, QueryShaper> = {
  pic: picQueryReply,
  clip: clipQueryReply,
  reel: reelQueryReply,
  // clip + reel query replies go here
  motion: motionQueryReply, videos: videosQueryReply,
  // motion + videos query replies go here
  'model-center': modelCenterReply,
  // model-center query reply goes here
};

export function queryReply(task: TaskRecord, ctx: ReplyContext): Record<string, unknown> {
  const shaper = QUERY_REPLIES[task.family];
  if (!shaper) throw new Error(`no query reply for family ${task.family}`);
  return shaper(task, ctx);
}
