/**
 * Faults of the fault proxy (fault-proxy.ts) about result files: a completed task whose result URLs
 * point somewhere else, such as one of the proxy's own `goneUrl`s.
 */
import type { Fault, RewriteContext } from './fault-proxy.js';

/** Result URL fields of the interface's query replies. */
const RESULT_URL_FIELDS = ['video_url', 'image_url', 'result_url'] as const;

/**
 * A fault that forwards and then points every result URL of a completed task (`video_url`,
 * `image_url`, `result_url`) at `url`: "completed, but the file is missing" with
 * `url = proxy.goneUrl(404)`, "the file cannot be had right now" with `goneUrl(500)`, "the file is
 * not what was asked" with `goneUrl(200)` (a JSON body). A function gives the URL per query (to tell
 * the tasks apart). `firstOnly`: only in the first completed answer to each query URL (the file is
 * there at the next check).
 */
export function missingResult(url: string | ((ctx: RewriteContext) => string), options: { firstOnly?: boolean } = {}): Fault {
  const done = new Set<string>();
  return {
    rewriteJson: (json, ctx) => {
      if (json === null || typeof json !== 'object' || (json as Record<string, unknown>).status !== 'completed') return json;
      if (options.firstOnly) {
        if (done.has(ctx.url)) return json;
        done.add(ctx.url);
      }
      const task = { ...(json as Record<string, unknown>) };
      const to = typeof url === 'string' ? url : url(ctx);
      for (const field of RESULT_URL_FIELDS) if (typeof task[field] === 'string') task[field] = to;
      return task;
    },
  };
}
