/**
 * Progress of a generation still waiting in an upstream's queue (fal's `queue_position`, the
 * prompts ahead of one in ComfyUI's queue): 1 far back, rising to 9 at the head. Once it runs,
 * providers whose upstream reports no progress leave it to the engine's time estimate (G129).
 */
export function queueProgress(position: number | undefined): number {
  return position === undefined ? 1 : Math.max(1, 9 - Math.min(8, Math.floor(position)));
}
