/**
 * fal's queue answers, read (G141): the submit's `{request_id, status_url,
 * response_url, cancel_url}` (the URLs used as given: they drop the model's sub-path), a status
 * `{status: IN_QUEUE | IN_PROGRESS | COMPLETED, queue_position?}`, and the files of a result at the
 * mapping's `output` path. Anything else is the channel's fault (ChannelError).
 */
import { malformedReply } from '../toolkit/errors.js';
import { UnrecoverableError, type RemoteFile } from '../types.js';
import type { FalHttp } from './http.js';
import { valuesAt } from './models.js';

export interface FalRefData {
  statusUrl: string;
  responseUrl: string;
  cancelUrl: string;
}

export type FalStatus = { status: 'IN_QUEUE'; queuePosition: number | undefined } | { status: 'IN_PROGRESS' } | { status: 'COMPLETED' };

export function parseJson(id: string, who: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', who);
  }
}

const field = (json: unknown, key: string): unknown => (json && typeof json === 'object' ? (json as Record<string, unknown>)[key] : undefined);

/** The request id and the URLs of a submit's answer, each at the queue's origin. */
export function submittedOf(id: string, who: string, http: FalHttp, json: unknown): { requestId: string; data: FalRefData } {
  const requestId = field(json, 'request_id');
  if (typeof requestId !== 'string' || requestId === '') throw malformedReply(id, 'a submit answer without request_id', who);
  const urls = (['status_url', 'response_url', 'cancel_url'] as const).map((k) => http.queueUrl(field(json, k)));
  if (urls.some((u) => u === undefined)) throw malformedReply(id, 'a submit answer without status_url, response_url and cancel_url at its own address', who);
  const [statusUrl, responseUrl, cancelUrl] = urls.map((u) => u!.toString()) as [string, string, string];
  return { requestId, data: { statusUrl, responseUrl, cancelUrl } };
}

export function statusOf(id: string, who: string, json: unknown): FalStatus {
  const status = field(json, 'status');
  if (status === 'IN_QUEUE') {
    const p = field(json, 'queue_position');
    return { status, queuePosition: typeof p === 'number' && Number.isFinite(p) && p >= 0 ? p : undefined };
  }
  if (status === 'IN_PROGRESS' || status === 'COMPLETED') return { status };
  throw malformedReply(id, `a status that is not IN_QUEUE, IN_PROGRESS or COMPLETED (${JSON.stringify(status)?.slice(0, 40)})`, who);
}

/**
 * The files at `path` of a result: http(s) URLs (fal's CDN), or `data:` URLs (what a model answers
 * with `sync_mode`, on by default for some), of the task's kind; none is a failed generation. An image the model's safety checker flagged (`has_nsfw_concepts[i]` true: fal then
 * answers 200 with that image blacked out) is no result: it is left out, and a result whose every
 * file was flagged is the upstream's refusal of the request (G436).
 */
export function filesOf(who: string, json: unknown, path: string, kind: RemoteFile['kind'], model: string): RemoteFile[] {
  const values = valuesAt(json, path);
  const flags = field(json, 'has_nsfw_concepts');
  const flagged: boolean[] = Array.isArray(flags) ? flags.map((f) => f === true) : [];
  // flags name the files in order; a list that does not line up with them holds back every file if it flags any
  const aligned = flagged.length === values.length;
  const held = (i: number): boolean => (aligned ? flagged[i] === true : flagged.includes(true));
  const isUrl = (v: unknown): v is string => typeof v === 'string' && /^(https?:\/\/|data:)/i.test(v);
  const urls = values.filter((v, i): v is string => isUrl(v) && !held(i));
  if (urls.length === 0 && values.some((v, i) => isUrl(v) && held(i))) {
    throw new UnrecoverableError(
      `the output was held back by the upstream model's safety checker: the fal model ${model} flagged every image it made (has_nsfw_concepts)`,
      { param: 'prompt' },
    );
  }
  if (urls.length === 0) throw new Error(`${who} answered a result without files at ${path}`);
  return urls.map((url) => ({ url, kind }));
}
