/**
 * What a Veo operation (`GET {name}`) says (G147): `done` absent or false is pending
 * (Veo reports no progress: the engine's estimate applies, G129); `error` is a failed generation
 * (INVALID_ARGUMENT and FAILED_PRECONDITION fail the task with the upstream's reason; any other
 * code may start a new generation); `done` with samples is completed, each
 * `response.generateVideoResponse.generatedSamples[].video.uri` a RemoteFile; one at the configured
 * API's origin is fetched with the key (sent to that origin only) and trusted, any other gets neither; `done`
 * with no samples is a failure, never a completion: with `raiMediaFilteredCount > 0` the task fails
 * naming the safety filter's reasons.
 */
import { malformedReply, type Scrub } from '../toolkit/errors.js';
import { UnrecoverableError, type CheckResult, type RemoteFile } from '../types.js';
import type { RpcStatus } from './errors.js';

interface Operation {
  name?: string;
  done?: boolean;
  error?: RpcStatus;
  response?: {
    generateVideoResponse?: { generatedSamples?: { video?: { uri?: string } }[]; raiMediaFilteredCount?: number; raiMediaFilteredReasons?: string[] };
  };
}

export interface OperationReading {
  id: string;
  who: string;
  scrub: Scrub;
  /** The configured API's origin: result URIs there get the key and are trusted. */
  origin: string;
  keyHeaders: Record<string, string>;
}

/** The operation name of a 200 answer to predictLongRunning. */
export function operationNameOf(r: OperationReading, text: string): string {
  let json: Operation;
  try {
    json = JSON.parse(text) as Operation;
  } catch {
    throw malformedReply(r.id, 'an answer that is not JSON', r.who);
  }
  const name = json?.name;
  if (typeof name !== 'string' || !/^[\w.-]+(\/[\w.-]+)*$/.test(name)) throw malformedReply(r.id, 'no operation name', r.who);
  return name;
}

const REQUEST_CODES = new Set([3, 9]); // INVALID_ARGUMENT, FAILED_PRECONDITION

export function checkResultOf(r: OperationReading, text: string): CheckResult {
  let op: Operation;
  try {
    op = JSON.parse(text) as Operation;
  } catch {
    throw malformedReply(r.id, 'an operation that is not JSON', r.who);
  }
  if (!op || typeof op !== 'object') throw malformedReply(r.id, 'an answer that is not an operation', r.who);
  if (op.error) {
    const said = r.scrub(op.error.message) || `code ${op.error.code ?? '?'}`;
    const message = `${r.who} failed the generation: ${said}`;
    return { state: 'failed', error: REQUEST_CODES.has(op.error.code ?? 0) ? new UnrecoverableError(said) : new Error(message) };
  }
  if (op.done !== true) return { state: 'pending' };
  const res = op.response?.generateVideoResponse;
  const uris = (res?.generatedSamples ?? []).map((s) => s.video?.uri).filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
  if (uris.length === 0) {
    if ((res?.raiMediaFilteredCount ?? 0) > 0 || (res?.raiMediaFilteredReasons?.length ?? 0) > 0) {
      const reasons = (res?.raiMediaFilteredReasons ?? [])
        .map((t) => r.scrub(t))
        .filter(Boolean)
        .join('; ');
      return {
        state: 'failed',
        error: new UnrecoverableError(`the video was blocked by the upstream's safety filters${reasons ? `: ${reasons}` : ''}`, { param: 'prompt' }),
      };
    }
    return { state: 'failed', error: new Error(`${r.who} ended the generation without a video`) };
  }
  const files: RemoteFile[] = uris.slice(0, 1).map((url) => {
    const here = new URL(url).origin === r.origin;
    // the key goes only to the configured API's own origin (safe-fetch drops it on a redirect elsewhere)
    return { url, kind: 'video', ...(here && { headers: r.keyHeaders, trusted: true }) };
  });
  return { state: 'completed', output: { files } };
}
