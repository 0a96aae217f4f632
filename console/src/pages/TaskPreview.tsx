import { useState } from 'react';
import type { TaskQueryReply } from '../../../src/contract/task-replies.js';

/** The result URL of a task in any family's query shape (null until completed). */
export function resultOf(task: TaskQueryReply): string | null {
  const t = task as Record<string, unknown>;
  for (const k of ['image_url', 'video_url', 'result_url', 'url']) if (typeof t[k] === 'string') return t[k] as string;
  const content = t.content as Record<string, unknown> | undefined;
  if (content && typeof content.video_url === 'string') return content.video_url;
  return null;
}

const isVideo = (task: TaskQueryReply, link: string): boolean => 'video_url' in task || /\.(mp4|webm|mov)(\?|$)/.test(link);

/** The result shown in the page ("Result"), with its pixel size and duration; the task's error if it failed. */
export function TaskPreview({ task }: { task: TaskQueryReply }) {
  const [facts, setFacts] = useState<string>();
  const link = resultOf(task);
  const error = (task as { error?: unknown }).error;
  return (
    <div className="preview">
      {typeof error === 'string' && error !== '' && (
        <p role="alert" className="error">
          Failed: {error}
        </p>
      )}
      {link &&
        (isVideo(task, link) ? (
          // biome-ignore lint/a11y/useMediaCaption: a generated clip has no speech to caption
          <video
            src={link}
            controls
            aria-label="Result"
            onLoadedMetadata={(e) => {
              const v = e.currentTarget;
              setFacts(`${v.videoWidth}x${v.videoHeight}, ${v.duration.toFixed(1)} s`);
            }}
          />
        ) : (
          <img src={link} alt="Result" onLoad={(e) => setFacts(`${e.currentTarget.naturalWidth}x${e.currentTarget.naturalHeight}`)} />
        ))}
      {facts && (
        <p className="facts" data-facts>
          {facts}
        </p>
      )}
    </div>
  );
}
