/**
 * ComfyUI's answers, read (G153). `GET /queue` is `{queue_running, queue_pending}`, each
 * a list of `[number, prompt_id, prompt, extra_data, outputs_to_execute]` (pending in heap order,
 * run lowest number first). `GET /history/{id}` is `{}` until the prompt ended, then `{id: {prompt,
 * outputs: {node id: {images | gifs | video | audio: [{filename, subfolder, type}], animated?}},
 * status: {status_str: success | error, completed, messages: [[event, data], ...]}}}`. Only files
 * of `type: "output"` are results (`temp` ones are previews ComfyUI deletes), and only those of the
 * task's kind, told by their extension (the core SaveVideo lists its mp4 under `images` with
 * `animated: [true]`). An answer of another shape (not JSON, a queue without its lists, a history
 * entry, its outputs or its status of another type) is an UnexpectedReply (G272).
 */
import { malformedReply } from '../toolkit/errors.js';
import type { RemoteFile } from '../types.js';
import type { ComfyFileRef } from './http.js';

export function parseJson(id: string, who: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', who);
  }
}

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** What this gateway writes into a prompt's `extra_data`, to find it again after a crash. */
export interface PromptMark {
  task: string;
  generation: number;
}

export type QueuePlace =
  | { state: 'running'; promptId: string }
  | { state: 'pending'; promptId: string /** prompts that run before it (the running ones included) */; ahead: number }
  | { state: 'absent' };

/** Where a prompt is in `GET /queue`: by its id, or (a server that chose the id itself) by this gateway's mark. */
export function queuePlace(id: string, who: string, json: unknown, promptId: string, mark?: PromptMark): QueuePlace {
  const q = obj(json);
  const running = q?.queue_running;
  const pending = q?.queue_pending;
  if (!Array.isArray(running) || !Array.isArray(pending)) throw malformedReply(id, 'a queue without queue_running and queue_pending lists', who);
  const matches = (item: unknown): boolean => {
    if (!Array.isArray(item)) return false;
    if (item[1] === promptId) return true;
    const m = obj(obj(item[3])?.mediagate);
    return mark !== undefined && m?.task === mark.task && m.generation === mark.generation;
  };
  const idOf = (item: unknown): string => String((item as unknown[])[1]);
  const run = running.find(matches);
  if (run) return { state: 'running', promptId: idOf(run) };
  const mine = pending.find(matches);
  if (!mine) return { state: 'absent' };
  const number = Number((mine as unknown[])[0]);
  const ahead = pending.filter((p) => Array.isArray(p) && Number(p[0]) < number).length;
  return { state: 'pending', promptId: idOf(mine), ahead: running.length + ahead };
}

export interface HistoryEntry {
  outputs: Record<string, unknown>;
  status?: { status_str?: unknown; messages?: unknown };
}

/** The entry of `promptId` in a `GET /history/{id}` answer, or undefined while ComfyUI has none. */
export function historyEntryOf(id: string, who: string, json: unknown, promptId: string): HistoryEntry | undefined {
  const h = obj(json);
  if (!h) throw malformedReply(id, 'a history that is not an object', who);
  if (h[promptId] === undefined) return undefined;
  // an entry, its outputs or its status of another shape is an answer to read again, not a failed prompt (G272)
  const entry = obj(h[promptId]);
  if (!entry) throw malformedReply(id, 'a history entry that is not an object', who);
  const outputs = obj(entry.outputs);
  if (!outputs) throw malformedReply(id, 'a history entry without an outputs object', who);
  const status = obj(entry.status);
  const said = status?.status_str;
  if (said !== undefined && !STATUSES.includes(said as string))
    throw malformedReply(id, `a history entry with a status ComfyUI does not have (${JSON.stringify(said).slice(0, 40)})`, who);
  return { outputs, ...(status && { status }) };
}

/** The `status_str` values of a prompt that left the queue (ComfyUI's execution.py). */
const STATUSES: readonly string[] = ['success', 'error'];

const EXTENSIONS: Record<RemoteFile['kind'], readonly string[]> = {
  image: ['png', 'jpg', 'jpeg', 'webp'],
  video: ['mp4', 'webm', 'mov', 'mkv'],
  audio: ['flac', 'mp3', 'wav', 'ogg', 'opus', 'm4a'],
};
/** Where ComfyUI lists saved files in a node's output (SaveImage, SaveVideo: images; VHS: gifs; some nodes: video; SaveAudio: audio). */
const FILE_LISTS = ['images', 'gifs', 'video', 'videos', 'audio'];

export const kindOfFile = (filename: string): RemoteFile['kind'] | undefined => {
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  return (Object.keys(EXTENSIONS) as RemoteFile['kind'][]).find((k) => ext !== undefined && EXTENSIONS[k].includes(ext));
};

/** Every saved output file of the nodes (all, or `only`), in node order: what the prompt made, by kind. */
export function outputFiles(outputs: Record<string, unknown>, only?: readonly string[]): Array<ComfyFileRef & { kind: RemoteFile['kind'] | undefined }> {
  const files: Array<ComfyFileRef & { kind: RemoteFile['kind'] | undefined }> = [];
  for (const [node, out] of Object.entries(outputs)) {
    if (only && !only.includes(node)) continue;
    for (const list of FILE_LISTS) {
      const items = obj(out)?.[list];
      if (!Array.isArray(items)) continue;
      for (const item of items) {
        const f = obj(item);
        if (typeof f?.filename !== 'string' || f.filename === '' || f.type !== 'output') continue;
        files.push({ filename: f.filename, subfolder: typeof f.subfolder === 'string' ? f.subfolder : '', type: 'output', kind: kindOfFile(f.filename) });
      }
    }
  }
  return files;
}

/** The events of a finished prompt's status (`[[event, data], ...]`). */
export function statusMessages(status: HistoryEntry['status']): Array<[string, Record<string, unknown>]> {
  const list = status?.messages;
  if (!Array.isArray(list)) return [];
  return list.filter((m): m is [string, Record<string, unknown>] => Array.isArray(m) && typeof m[0] === 'string' && !!obj(m[1]));
}
