/**
 * A channel's probe (G323): one cheap call that shows the upstream answers with the configured key,
 * a list or status call of its API, never a generation. Each provider type names its call; an
 * answer outside `accept` (by default 2xx) fails the probe with the status, and the upstream's
 * words only through the scrubbing of the admin route.
 */
import type { ProbeResult } from './probe-result.js';
import type { UpstreamAnswer } from './toolkit/upstream-call.js';

export class ProbeFailed extends Error {
  constructor(
    readonly call: string,
    readonly status: number,
    detail: string,
  ) {
    super(`${call} answered ${status}${status === 401 || status === 403 ? ' (the key was refused)' : ''}${detail ? `: ${detail}` : ''}`);
    this.name = 'ProbeFailed';
  }
}

/** How long a probe may take, ms. */
export const PROBE_TIMEOUT_MS = 10_000;
/** The most of an answer a probe reads. */
export const PROBE_MAX_BYTES = 256 * 1024;

/** The probe's result for `answer` to `call`: accepted statuses pass, others fail naming the status. */
export function probeResult(call: string, answer: UpstreamAnswer, accept: (status: number) => boolean = (s) => s >= 200 && s < 300): ProbeResult {
  if (!accept(answer.status)) throw new ProbeFailed(call, answer.status, answer.text.slice(0, 200));
  return { call, status: answer.status };
}

export type { ProbeResult } from './probe-result.js';
