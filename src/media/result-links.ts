import { retentionFor } from '../contract/catalog.js';
import type { ReplyContext } from '../families/reply-context.js';
import type { TaskRecord } from '../store/types.js';
import type { ResultUrlSigner } from './signed-url.js';

/** Reply context whose result URLs are signed to expire when the task's family retention ends. */
export function resultLinks(signer: ResultUrlSigner, videosResultTtlHours: number): ReplyContext {
  return {
    resultUrl(task: TaskRecord, kind?: 'image' | 'video' | 'audio'): string | null {
      const files = task.result?.files ?? [];
      const file = kind ? (files.find((f) => f.contentType.startsWith(`${kind}/`)) ?? files[0]) : files[0];
      if (!file || task.finishedAt === null) return null;
      const until = task.finishedAt + retentionFor(task.family, videosResultTtlHours).resultMs;
      return signer.signResultUrl(task.id, file.name, until);
    },
  };
}
