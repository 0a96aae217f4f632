import type { TaskRecord } from '../store/types.js';
import { unixSeconds, type ReplyContext } from './reply-context.js';

/**
 * `videos` create response: the envelope `{code: "0", msg: null, data: {projectId}}`
 * (interface.md: `0` means success; `msg` carries a reason only on failure).
 */
export function videosCreateReply(task: TaskRecord): Record<string, unknown> {
  return { code: '0', msg: null, data: { projectId: task.id } };
}

/**
 * `videos` query response (via `/v1/result/{id}`, id = projectId): `video_url` and
 * `actualDuration` only when completed, `error` only when failed, null otherwise.
 */
export function videosQueryReply(task: TaskRecord, ctx: ReplyContext): Record<string, unknown> {
  const completed = task.status === 'completed';
  return {
    id: task.id, object: 'video', created: unixSeconds(task.createdAt), model: task.model,
    status: task.status, progress: task.progress,
    video_url: completed ? ctx.resultUrl(task, 'video') : null,
    actualDuration: completed ? task.result?.actualDuration ?? null : null,
    error: task.status === 'failed' ? task.error : null,
  };
}
