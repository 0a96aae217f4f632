/**
 * A task-running process's heartbeat through the store (G264): its row in `worker_beats` is
 * refreshed every {@link HEARTBEAT_MS}; a worker not seen for {@link LIVE_WINDOW_MS} is not alive
 * (`mediagate_workers_live` leaves it out). Beats that meet an unreachable database are skipped
 * (the next one writes again); a graceful stop removes the row.
 */
import type { Logger } from 'pino';
import type { WorkerBeat, WorkerStore } from '../store/types.js';

/** How often a worker writes its heartbeat. */
export const HEARTBEAT_MS = 5_000;
/** A worker seen within this long is alive (three missed beats and it is not). */
export const LIVE_WINDOW_MS = 3 * HEARTBEAT_MS;
/** Rows of workers not seen for this long are removed by the next beat of any worker. */
const FORGET_AFTER_MS = 24 * 3600_000;

export class WorkerHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private failing = false;

  constructor(
    private readonly store: WorkerStore,
    private readonly worker: WorkerBeat,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.timer) return;
    this.beat();
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Stops beating and removes the row (best effort: a store that cannot be reached lets it age out). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.store.leave(this.worker.id).catch(() => undefined);
  }

  private beat(): void {
    if (this.beating) return;
    const now = this.now();
    this.beating = this.store
      .beat(this.worker, now, now - FORGET_AFTER_MS)
      .then(
        () => {
          if (this.failing) this.log.info('worker heartbeat written again');
          this.failing = false;
        },
        (err: unknown) => {
          if (!this.failing) this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not write the worker heartbeat; trying again');
          this.failing = true;
        },
      )
      .finally(() => {
        this.beating = undefined;
      });
  }
}
