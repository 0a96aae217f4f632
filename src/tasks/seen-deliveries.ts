/**
 * Ids of provider callback deliveries already taken (G158), so a delivery sent again (a
 * replay, or the upstream's own repeat) changes nothing. An id is kept twice the time tolerance (10
 * minutes): a delivery signed more than 5 minutes away from the clock is refused anyway, so one
 * taken longer ago than that can no longer pass. Per process and bounded: past `max` ids the
 * oldest are forgotten (a repeat of one of those, or one reaching another process, brings one
 * more check forward, nothing else).
 */
import { TOLERANCE_SECONDS } from '../providers/callbacks/delivery.js';

export class SeenDeliveries {
  /** id -> when it may be forgotten; in the order taken, so the oldest come first. */
  private readonly ids = new Map<string, number>();

  constructor(
    private readonly max = 50_000,
    private readonly keepMs = 2 * TOLERANCE_SECONDS * 1000,
  ) {}

  /** Takes `id` unless it was taken already (then false). */
  take(id: string, now: number): boolean {
    for (const [old, until] of this.ids) {
      if (until > now) break;
      this.ids.delete(old);
    }
    if (this.ids.has(id)) return false;
    this.ids.set(id, now + this.keepMs);
    if (this.ids.size > this.max) this.ids.delete(this.ids.keys().next().value as string);
    return true;
  }

  /** Forgets `id` (a delivery taken but not acted on: its repeat must be taken). */
  forget(id: string): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }
}
