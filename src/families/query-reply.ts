import type { TaskRecord } from '../store/types.js';
import { picQueryReply } from './pic.js';
import type { ReplyContext } from './reply-context.js';

type QueryShaper = (task: TaskRecord, ctx: ReplyContext) => Record<string, unknown>;

/** Query reply shaper per family: any query path answers for any task of the caller (decisions.md #4). */
const QUERY_REPLIES: Record<string, QueryShaper> = {
  pic: picQueryReply,
  // clip + reel query replies go here
  // motion + videos query replies go here
  // model-center query reply goes here
};

export function queryReply(task: TaskRecord, ctx: ReplyContext): Record<string, unknown> {
  const shaper = QUERY_REPLIES[task.family];
  if (!shaper) throw new Error(`no query reply for family ${task.family}`);
  return shaper(task, ctx);
}
