/**
 * A prediction as Replicate answers it (`{id, status, output, error, logs, urls, ...}`), and what a
 * look at it means (G136): `starting`/`processing` pending, with the progress its logs
 * report (tqdm bars: `45%|████▌ | 9/20`), `succeeded` completed with its output files (a URL, a list
 * of URLs, or an object of them) as RemoteFiles the engine re-hosts at once (they are deleted an
 * hour after the prediction ends), `failed` failed with its error, `canceled`/`aborted` failed.
 */
import { malformedReply, type Scrub } from '../toolkit/errors.js';
import type { CheckResult, RemoteFile } from '../types.js';
import { predictionFailure, whoOf } from './errors.js';

export interface Prediction {
  id: string;
  status: string;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
}

export function predictionOf(id: string, text: string): Prediction {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', whoOf(id));
  }
  const p = json as Partial<Prediction> | null;
  if (!p || typeof p.id !== 'string' || p.id === '' || typeof p.status !== 'string')
    throw malformedReply(id, 'an answer that is not a prediction (no id or status)', whoOf(id));
  return p as Prediction;
}

/** The last tqdm bar in the logs as a percentage (0-99), the way the official client reads it. */
export function progressOfLogs(logs: unknown): number | undefined {
  if (typeof logs !== 'string') return undefined;
  const lines = logs.split(/[\r\n]+/).reverse();
  for (const line of lines) {
    const m = /^\s*(\d+)%\s*\|.*?\|\s*(\d+)\/(\d+)/.exec(line);
    if (m && Number(m[3]) > 0) return Math.max(0, Math.min(99, Math.floor((100 * Number(m[2])) / Number(m[3]))));
  }
  return undefined;
}

/** Every file URL of an output, in order: a string, a list, or an object of them; http(s), or `data:` (a file answered inline, as the official client takes them too). */
export function urlsOfOutput(output: unknown): string[] {
  if (typeof output === 'string') return /^(https?:\/\/|data:)/i.test(output) ? [output] : [];
  if (Array.isArray(output)) return output.flatMap(urlsOfOutput);
  if (output && typeof output === 'object') return Object.values(output).flatMap(urlsOfOutput);
  return [];
}

export interface CheckContext {
  id: string;
  kind: RemoteFile['kind'];
  scrub: Scrub;
  /** Whether a file URL is at the configured address (an upstream on the operator's network: the fake). */
  trusted(url: string): boolean;
}

export function checkResultOf(p: Prediction, c: CheckContext): CheckResult {
  switch (p.status) {
    case 'starting':
    case 'processing': {
      const progress = progressOfLogs(p.logs);
      return { state: 'pending', ...(progress !== undefined && { progress }) };
    }
    case 'succeeded': {
      const [url] = urlsOfOutput(p.output);
      // a task makes one file: the first output (num_outputs is the mapping's constant)
      if (url === undefined) return { state: 'failed', error: new Error(`${whoOf(c.id)}: the prediction succeeded without an output file`) };
      return { state: 'completed', output: { files: [{ url, kind: c.kind, ...(c.trusted(url) && { trusted: true }) }] } };
    }
    case 'failed':
      return { state: 'failed', error: predictionFailure(c.id, p.error, c.scrub) };
    case 'canceled':
    case 'aborted':
      return { state: 'failed', error: new Error(`${whoOf(c.id)}: the prediction was ${p.status} there`) };
    default:
      throw malformedReply(c.id, `a prediction of unknown status "${c.scrub(p.status)}"`, whoOf(c.id));
  }
}
