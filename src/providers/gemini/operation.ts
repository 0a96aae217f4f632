/**
 * What a Veo operation (`GET {name}`) says (G147): `done` absent or false is pending
 * (Veo reports no progress: the engine's estimate applies, G129); `error` is a failed generation
 * (INVALID_ARGUMENT and FAILED_PRECONDITION fail the task with the upstream's reason; any other
 * code may start a new generation); `done` with samples is completed, each
 * `response.generateVideoResponse.generatedSamples[].video.uri` a RemoteFile; one at the configured
 * API's origin is fetched with the key (sent to that origin only) and trusted, any other gets neither
 * (one at Google's API while a proxy is configured is fetched through the proxy, G452); `done`
 * with no samples is a failure, never a completion: with `raiMediaFilteredCount > 0` the task fails
 * naming the safety filter's reasons.
 */
import { malformedReply, type Scrub } from '../toolkit/errors.js';
import { UnrecoverableError, type CheckResult, type RemoteFile } from '../types.js';
import { GEMINI_DEFAULTS } from './defaults.js';

/** The Gemini API's own address, where it names its result files. */
const GOOGLE_API = new URL(GEMINI_DEFAULTS.baseUrl);

export interface OperationReading {
  id: string;
  who: string;
  scrub: Scrub;
  /** The configured API's base URL: result URIs at its origin get the key and are trusted. */
  base: URL;
  keyHeaders: Record<string, string>;
}

/** The operation name of a 200 answer to predictLongRunning. */
export function operationNameOf(r: OperationReading, text: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformedReply(r.id, 'an answer that is not JSON', r.who);
  }
  const name = json && typeof json === 'object' ? (json as { name?: unknown }).name : undefined;
  if (typeof name !== 'string' || !/^[\w.-]+(\/[\w.-]+)*$/.test(name)) throw malformedReply(r.id, 'no operation name', r.who);
  return name;
}

const REQUEST_CODES = new Set([3, 9]); // INVALID_ARGUMENT, FAILED_PRECONDITION

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Where a result URI is fetched from. The API names its files at its own address
 * (`https://generativelanguage.googleapis.com/v1beta/files/<id>:download?alt=media`) even when the
 * gateway reaches it through another `baseUrl` (a proxy in front of it): such a URI is fetched
 * through the configured base instead, with the key, as the API's own (G452). Undefined: not an
 * http(s) URL.
 */
function resultUrlOf(r: OperationReading, uri: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.origin !== GOOGLE_API.origin || r.base.origin === GOOGLE_API.origin) return url;
  // the path below the API's version (`/v1beta/files/...` -> `/files/...`), under the configured base
  const below = url.pathname.replace(/^\/[^/]+/, '');
  return new URL(`${r.base.href.replace(/\/+$/, '')}${below}${url.search}`);
}

/** A 200 answer to an operation query as a check result; an answer not of the API's shape is an UnexpectedReply (G272), never a TypeError. */
export function checkResultOf(r: OperationReading, answer: string): CheckResult {
  let json: unknown;
  try {
    json = JSON.parse(answer);
  } catch {
    throw malformedReply(r.id, 'an operation that is not JSON', r.who);
  }
  const op = obj(json);
  if (!op) throw malformedReply(r.id, 'an answer that is not an operation', r.who);
  if (op.error !== undefined && op.error !== null && op.error !== false) {
    const e = obj(op.error);
    const code = typeof e?.code === 'number' ? e.code : undefined;
    const said = r.scrub(text(e?.message) ?? text(op.error)) || `code ${code ?? '?'}`;
    const message = `${r.who} failed the generation: ${said}`;
    return { state: 'failed', error: REQUEST_CODES.has(code ?? 0) ? new UnrecoverableError(said) : new Error(message) };
  }
  if (op.done !== true) return { state: 'pending' };
  if (op.response !== undefined && op.response !== null && !obj(op.response)) throw malformedReply(r.id, 'an operation whose response is not an object', r.who);
  const res = obj(obj(op.response)?.generateVideoResponse);
  const samples = res?.generatedSamples ?? [];
  if (!Array.isArray(samples)) throw malformedReply(r.id, 'an operation whose generatedSamples is not a list', r.who);
  const urls = samples
    .map((s) => text(obj(obj(s)?.video)?.uri))
    .map((u) => (u === undefined ? undefined : resultUrlOf(r, u)))
    .filter((u): u is URL => u !== undefined);
  if (urls.length === 0) {
    const count = res?.raiMediaFilteredCount;
    const listed = Array.isArray(res?.raiMediaFilteredReasons) ? res.raiMediaFilteredReasons : [];
    if ((typeof count === 'number' && count > 0) || listed.length > 0) {
      const reasons = listed
        .map((t) => r.scrub(text(t)))
        .filter(Boolean)
        .join('; ');
      return {
        state: 'failed',
        error: new UnrecoverableError(`the video was blocked by the upstream's safety filters${reasons ? `: ${reasons}` : ''}`, { param: 'prompt' }),
      };
    }
    return { state: 'failed', error: new Error(`${r.who} ended the generation without a video`) };
  }
  const files: RemoteFile[] = urls.slice(0, 1).map((url) => {
    const here = url.origin === r.base.origin;
    // the key goes only to the configured API's own origin (safe-fetch drops it on a redirect elsewhere)
    return { url: url.toString(), kind: 'video', ...(here && { headers: r.keyHeaders, trusted: true }) };
  });
  return { state: 'completed', output: { files } };
}
