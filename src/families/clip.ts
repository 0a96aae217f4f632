import type { TaskRecord } from '../store/types.js';
import { queueReasonOf, unixSeconds, type ReplyContext } from './reply-context.js';
import type { ClipCreateReply, ClipQueryReply } from '../contract/task-replies.js';

/**
 * `object` label of a clip task: `video.generation` for Form A; `video` for Form B, in its create
 * reply too (its example shows `video`, matching its query reply; decision taken here).
 */
export function clipObject(task: TaskRecord): 'video.generation' | 'video' {
  return task.form === 'B' ? 'video' : 'video.generation';
}

/** Seconds of the produced video: what the provider reported, else the planned length. */
export function actualDurationOf(task: TaskRecord): number | undefined {
  if (task.status !== 'completed') return undefined;
  const output = task.request.output;
  return task.result?.actualDuration ?? (output.kind === 'video' ? output.durationSec : undefined);
}

/** `clip` create response (both forms): id, object, created, model, status, error, plus progress. */
export function clipCreateReply(task: TaskRecord): ClipCreateReply {
  return {
    id: task.id,
    object: clipObject(task),
    created: unixSeconds(task.createdAt),
    model: task.model,
    status: task.status,
    progress: task.progress,
    error: task.error,
  };
}

/**
 * `clip` query response: `video_url` and `error` null until they apply; `actualDuration` (seconds)
 * once completed (the name Form B leaves "not shown"; D14).
 */
export function clipQueryReply(task: TaskRecord, ctx: ReplyContext): ClipQueryReply {
  const actualDuration = actualDurationOf(task);
  return {
    id: task.id,
    object: clipObject(task),
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
