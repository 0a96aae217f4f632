/**
 * Reading an upstream's answers (G96): the upstream id of a create (`id`, or the videos
 * envelope's `data.projectId`), and a status query as a check result: `queued`/`processing` pending
 * with the upstream's progress, `completed` with its result file (the family's URL field) and
 * `actualDuration`, `failed` and `cancelled` as a failed generation. An answer that is not the
 * contract's (not JSON, no id, no result URL, an unknown status) is the channel's fault.
 */
import type { FamilyId } from '../../contract/families.js';
import type { CheckResult, ProviderJob, RemoteFile } from '../types.js';
import { createFailure, malformedReply, retryAfterMsOf, type Headers, type Scrub } from '../toolkit/errors.js';

export function parseJson(id: string, text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformedReply(id, 'malformed JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw malformedReply(id, 'JSON that is not an object');
  return json as Record<string, unknown>;
}

/** An upstream task id we can put in a path: printable, no spaces, bounded. */
const UPSTREAM_ID = /^[\x21-\x7e]{1,200}$/;

/** The upstream's progress (0-100), when it gave a number. */
export function progressOf(json: Record<string, unknown>): number | undefined {
  const p = json.progress;
  return typeof p === 'number' && Number.isFinite(p) ? Math.min(100, Math.max(0, p)) : undefined;
}

/** What a successful create answered: the upstream id and progress. */
export function createdOf(
  relayId: string,
  family: FamilyId,
  json: Record<string, unknown>,
  headers: Headers,
  scrub: Scrub,
): { upstreamId: string; progress?: number } {
  let upstreamId: unknown;
  if (family === 'videos') {
    // `{code: "0", msg, data: {projectId}}`; a non-zero code is a refusal even with a 2xx status;
    // a code that is neither text nor a number is not the envelope's: an unreadable answer (G272)
    const raw = json.code;
    if (raw !== undefined && raw !== null && typeof raw !== 'string' && typeof raw !== 'number')
      throw malformedReply(relayId, 'an envelope whose code is neither a string nor a number');
    const code = raw === undefined || raw === null ? undefined : String(raw);
    if (code !== undefined && code !== '0') {
      const status = /^[1-5]\d\d$/.test(code) ? Number(code) : 400;
      throw createFailure(relayId, status, headers, JSON.stringify({ code, msg: json.msg ?? null }), scrub);
    }
    upstreamId = (json.data as { projectId?: unknown } | null | undefined)?.projectId;
  } else {
    upstreamId = json.id;
  }
  if (typeof upstreamId !== 'string' || !UPSTREAM_ID.test(upstreamId)) {
    throw malformedReply(relayId, family === 'videos' ? 'an envelope without data.projectId' : 'a task object without an id');
  }
  const progress = progressOf(json);
  return { upstreamId, ...(progress !== undefined && { progress }) };
}

/** Where each family's query answer names its result (Model Center: `result_url`, then the typed field). */
const RESULT_FIELDS: Record<FamilyId, readonly string[]> = {
  pic: ['image_url'],
  clip: ['video_url'],
  reel: ['video_url'],
  motion: ['video_url'],
  videos: ['video_url'],
  'model-center': ['result_url', 'video_url', 'image_url'],
};

function resultUrlOf(family: FamilyId, json: Record<string, unknown>): string | undefined {
  for (const field of RESULT_FIELDS[family]) {
    const v = json[field];
    if (typeof v !== 'string' || v === '') continue;
    try {
      const u = new URL(v);
      if (u.protocol === 'http:' || u.protocol === 'https:') return v;
    } catch {
      // not a URL: try the next field
    }
  }
  return undefined;
}

export interface CheckReading {
  relayId: string;
  job: ProviderJob;
  /** Whether a result URL is at one of the relay's configured origins (G96: only those may be private). */
  trusted: (url: string) => boolean;
  scrub: Scrub;
}

/** A 2xx status query answer as a check result. */
export function checkResultOf(json: Record<string, unknown>, headers: Headers, r: CheckReading): CheckResult {
  const relay = `the relay upstream "${r.relayId}"`;
  const status = json.status;
  if (status === 'queued' || status === 'processing') {
    const progress = progressOf(json);
    const retryAfterMs = retryAfterMsOf(headers);
    return { state: 'pending', ...(progress !== undefined && { progress }), ...(retryAfterMs !== undefined && { retryAfterMs }) };
  }
  if (status === 'completed') {
    const url = resultUrlOf(r.job.family, json);
    if (url === undefined) throw malformedReply(r.relayId, `a completed task without its result URL (${RESULT_FIELDS[r.job.family].join(' or ')})`);
    // no credentials go with the download: an upstream mediagate's result URLs are signed
    const file: RemoteFile = { url, kind: r.job.output.kind, ...(r.trusted(url) && { trusted: true }) };
    const d = json.actualDuration;
    const actualDuration = typeof d === 'number' && Number.isFinite(d) && d > 0 ? d : undefined;
    return { state: 'completed', output: { files: [file], ...(actualDuration !== undefined && { actualDuration }) } };
  }
  if (status === 'failed') {
    const reason = r.scrub(typeof json.error === 'string' ? json.error : undefined);
    return { state: 'failed', error: new Error(`${relay} reported: ${reason || 'failed, without a reason'}`) };
  }
  if (status === 'cancelled') {
    return { state: 'failed', error: new Error(`${relay} cancelled the generation (not at this gateway's request)`) };
  }
  throw malformedReply(r.relayId, `a task status the contract does not have (${r.scrub(JSON.stringify(status ?? null)).slice(0, 40)})`);
}
