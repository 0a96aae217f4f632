/**
 * What every provider's callback check shares (G158): reading a header of a delivery,
 * and the time rule. A delivery is signed with the time it was sent; one signed more than
 * {@link TOLERANCE_SECONDS} away from the gateway's clock (either way) is refused before any key is
 * used, so a captured delivery cannot be replayed later. Within that window a repeat is the
 * receiver's to spot (tasks/callbacks.ts).
 */
import type { CallbackCheck } from '../types.js';

/** How far a delivery's signed time may be from the gateway's clock, seconds. */
export const TOLERANCE_SECONDS = 300;

export type CallbackRefusal = Extract<CallbackCheck, { valid: false }>;

/** A header's value (the first, when sent several times), or undefined. */
export function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A header that is missing, or does not read as its rule says. */
export function malformed(header: string, rule: string): CallbackRefusal {
  return { valid: false, kind: 'malformed', header, message: `${header}: ${rule}` };
}

/**
 * Why a signed time (Unix seconds, in `header`) is refused, or undefined when it is within
 * {@link TOLERANCE_SECONDS} of `nowMs`.
 */
export function timeRefusal(header: string, raw: string | undefined, nowMs: number): CallbackRefusal | undefined {
  if (raw === undefined || raw === '') return malformed(header, 'is required');
  if (!/^\d{1,12}$/.test(raw)) return malformed(header, `must be Unix seconds (digits), got "${raw.slice(0, 40)}"`);
  const off = Math.round(Number(raw) - nowMs / 1000);
  if (Math.abs(off) <= TOLERANCE_SECONDS) return undefined;
  return {
    valid: false,
    kind: 'stale',
    header,
    message: `${header} ${raw} is ${Math.abs(off)} s ${off < 0 ? 'before' : 'after'} this gateway's clock; at most ${TOLERANCE_SECONDS} s are accepted (an older delivery may be a replay)`,
  };
}
