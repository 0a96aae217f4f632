/**
 * Progress of a generation at an upstream that reports none (G129): an estimate from
 * the time since it started against the family's typical duration. It rises to 90 at the typical
 * duration, then ever more slowly towards 99, never reaching 100 before the task is completed; the
 * task's progress only rises (states.ts), so a later, lower upstream value never shows.
 */
import type { FamilyId } from '../contract/families.js';

/** How long a generation of the family typically takes at an upstream, seconds. */
export const TYPICAL_SECONDS: Record<FamilyId, number> = {
  pic: 20,
  clip: 120,
  reel: 120,
  motion: 120,
  videos: 180,
  'model-center': 60,
};

/** The estimated progress (0-99) `elapsedMs` after the generation started. */
export function estimatedProgress(family: FamilyId, elapsedMs: number): number {
  const f = Math.max(0, elapsedMs) / (TYPICAL_SECONDS[family] * 1000);
  const p = f <= 1 ? 90 * f : 90 + 9 * (1 - Math.exp(-(f - 1)));
  return Math.min(99, Math.floor(p));
}
