import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { readBlobBytes } from '../media/blob-store.js';
import type { Provider, ProviderContext } from '../providers/types.js';
import { isStoreUnavailable } from '../store/faults.js';
import type { TaskRecord } from '../store/types.js';
import { inTaskSpan } from '../tracing/task-spans.js';
import { applyDecision } from './apply-decision.js';
import { patientTaskStore } from './patient-store.js';
import { claimNextTask, isFinished } from './states.js';
import type { RunnerOptions } from './runner-options.js';
import { decide, stepLimitsOf, type StopReason } from './step-outcome.js';
import { checkTask, deferForServerFault, jobOf, startTask, type Work } from './task-work.js';

interface Running {
  task: TaskRecord;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Runs the work of the queue: claims it with a lease (a queued task to start, or a due check of a
 * generation at an upstream), renews the lease while the provider works, and hands the piece of
 * work to task-work.ts, which changes the task only through `states.ts`. Between checks a task
 * holds nothing here: waiting costs no slot and no memory (G87). Tasks whose worker died (lease
 * lapsed) go back to the queue (or back to waiting for their check), up to `maxAttempts` starts.
 */
export class TaskRunner {
  readonly workerId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  private readonly activeByProvider = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  /** Unsubscribes from a shared store's news of work and cancels (G184). */
  private unwatch: Array<() => void> = [];
  private stopping = false;
  private started = false;
  private fillScheduled = false;
  /** The fill under way (one at a time: its claims are awaited), and whether another was asked for meanwhile. */
  private filling: Promise<void> | undefined;
  private fillAgain = false;
  /** The lapsed-lease sweep under way, if any (sweeps never overlap). */
  private recovering = false;
  private dueTimer: NodeJS.Timeout | undefined;
  /** No claims before this time: the gateway just hit one of its own faults (G84). */
  private pausedUntil = 0;
  /** Whether the last fill found a resource short (to log changes, not every fill). */
  private short = false;
  /** When a store call of this worker last met an unreachable database (0: never), for the lapsed-lease sweep's grace (G259). */
  private storeFaultAt = 0;
  /** Whether the last fill could not reach the database (to log changes, not every fill). */
  private storeDown = false;

  constructor(private readonly opts: RunnerOptions) {}

  get attemptTimeoutMs(): number {
    return this.opts.attemptTimeoutMs ?? 30 * 60_000;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.sweepLapsedLeases();
    this.timers.push(setInterval(() => this.fill(), this.opts.pollMs ?? 1000));
    this.timers.push(setInterval(() => this.sweepLapsedLeases(), Math.max(500, Math.floor(this.opts.leaseMs / 3))));
    for (const t of this.timers) t.unref();
    // a store shared by several processes tells of work queued and tasks cancelled by any of them
    const { store } = this.opts;
    const queue = store.watchQueue?.((provider) => {
      if (provider === '' || this.opts.providers.get(provider)) this.wake();
    });
    const cancels = store.watchCancels?.((id) => this.abortTask(id));
    this.unwatch = [queue, cancels].filter((u) => u !== undefined);
    this.fill();
  }

  /** Called after a submit: look for work now instead of at the next poll. */
  wake(): void {
    if (!this.started || this.stopping || this.fillScheduled) return;
    this.fillScheduled = true;
    setImmediate(() => {
      this.fillScheduled = false;
      this.fill();
    });
  }

  /** Tells a running task's worker that the task was cancelled, so it stops generating. */
  abortTask(taskId: string): void {
    this.running.get(taskId)?.controller.abort('cancelled' satisfies StopReason);
  }

  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Graceful stop: claim nothing more, let running work finish for up to `graceMs`, then abort the
   * rest: a start goes back to the queue (its attempt given back), a check back to waiting.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const stop of this.unwatch.splice(0)) stop();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.dueTimer) clearTimeout(this.dueTimer);
    await this.filling; // a claim in flight launches its task: it is waited for like the others
    const all = Promise.all([...this.running.values()].map((r) => r.done));
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([all.then(() => 'done' as const), timeout])) === 'timeout') {
      for (const r of this.running.values()) r.controller.abort('shutdown' satisfies StopReason);
      await all;
    }
  }

  private providerIds(): string[] {
    return this.opts.providers.mediaIds();
  }

  private slots(provider: Provider): number {
    return provider.concurrency ?? this.opts.concurrency;
  }

  /** Whether this worker may claim now: not paused after a fault of its own, its resources not short. */
  private mayClaim(): boolean {
    if (Date.now() < this.pausedUntil) return false;
    const state = this.opts.resources?.check();
    if (state && !state.ok) {
      if (!this.short) this.opts.log.warn({ problems: state.problems }, 'claiming no tasks: the gateway is short of a resource');
      this.short = true;
      return false;
    }
    if (this.short) this.opts.log.info('resources available again: claiming tasks');
    this.short = false;
    return true;
  }

  /**
   * Claims work up to every provider's free slots. One fill runs at a time; one asked for while it
   * runs follows it (a slot freed meanwhile is filled then).
   */
  private fill(): void {
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = this.fillOnce()
      .then(
        () => {
          if (this.storeDown) this.opts.log.info('the database answers again: claiming tasks');
          this.storeDown = false;
        },
        (err: unknown) => {
          if (!this.noteStoreFault(err)) {
            this.opts.log.error({ err }, 'could not claim tasks');
            return;
          }
          if (!this.storeDown) this.opts.log.warn({ err: (err as Error).message }, 'the database cannot be reached: claiming nothing until it answers');
          this.storeDown = true;
        },
      )
      .finally(() => {
        this.filling = undefined;
        if (this.fillAgain && !this.stopping) {
          this.fillAgain = false;
          this.fill();
        }
      });
  }

  private async fillOnce(): Promise<void> {
    this.fillAgain = false;
    if (this.stopping || !this.mayClaim()) return;
    for (const id of this.providerIds()) {
      const provider = this.opts.providers.get(id)!;
      // the slot is taken before the claim is awaited and given back if nothing was claimed, so a
      // task that finishes meanwhile never lets the count pass the provider's slots
      while (!this.stopping && (this.activeByProvider.get(id) ?? 0) < this.slots(provider)) {
        this.takeSlot(id);
        let task: TaskRecord | undefined;
        try {
          task = await claimNextTask(this.opts.store, [id], this.workerId, this.opts.leaseMs);
        } finally {
          if (!task) this.freeSlot(id);
        }
        if (!task) break;
        this.launch(provider, task);
      }
    }
    await this.scheduleDue();
  }

  /** Counts one more running piece of work of a provider. */
  private takeSlot(id: string): void {
    this.activeByProvider.set(id, (this.activeByProvider.get(id) ?? 0) + 1);
  }

  private freeSlot(id: string): void {
    this.activeByProvider.set(id, (this.activeByProvider.get(id) ?? 1) - 1);
  }

  /** Wakes up when the earliest backed-off task or check becomes due (sooner than the poll interval). */
  private async scheduleDue(): Promise<void> {
    if (this.dueTimer) return;
    const next = await this.opts.store.nextRunAfter(this.providerIds());
    if (next === undefined || this.dueTimer || this.stopping) return;
    const delay = next - Date.now();
    if (delay <= 0 || delay > (this.opts.pollMs ?? 1000)) return;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.fill();
    }, delay + 5);
    this.dueTimer.unref();
  }

  /** Runs a claimed piece of work in the slot taken for it. */
  private launch(provider: Provider, task: TaskRecord): void {
    const controller = new AbortController();
    const entry: Running = { task, controller, done: Promise.resolve() };
    this.running.set(task.id, entry);
    entry.done = inTaskSpan(task, task.upstream?.ref !== undefined, () => this.run(task, controller))
      .catch((err: unknown) => this.opts.log.error({ err, taskId: task.id }, 'task runner fault'))
      .finally(() => {
        this.running.delete(task.id);
        this.freeSlot(provider.id);
        this.wake();
      });
  }

  /** One piece of work on a leased task: a start, or a check of its generation at an upstream. */
  private async run(task: TaskRecord, controller: AbortController): Promise<void> {
    const { store, log: baseLog, leaseMs } = this.opts;
    const checking = task.upstream?.ref !== undefined;
    const log = baseLog.child({ taskId: task.id, provider: task.provider, attempt: task.attempts, ...(checking && { check: true }) });
    let workDir: string;
    try {
      // a check rarely needs a folder (hundreds a second when thousands of tasks wait): its path is
      // reserved, and made only by a provider that writes there (G127)
      workDir = checking
        ? path.join(this.opts.tmpDir, `${task.id}-check-${randomBytes(6).toString('hex')}`)
        : await fs.promises.mkdtemp(path.join(this.opts.tmpDir, `${task.id}-`));
    } catch (err) {
      // the work has not started: whatever stops the gateway from making a folder is its own fault
      this.pause(await deferForServerFault(this.work(task, controller, log, ''), err));
      return;
    }
    // one renewal at a time: a slow one is not overtaken by the next; none is acted on after the work ended
    let renewing = false;
    let ended = false;
    // a renewal that meets a dropped connection is tried again at once, on a new one (G258)
    const renewOnce = (): Promise<boolean> => store.renewLease(task.id, this.workerId, Date.now() + leaseMs);
    const renew = async (): Promise<void> => {
      const renewed = await renewOnce().catch((err: unknown) => {
        if (!this.noteStoreFault(err)) throw err;
        return renewOnce();
      });
      if (renewed) return;
      const current = await store.get(task.id);
      if (!ended) controller.abort((current?.status === 'cancelled' ? 'cancelled' : 'lease-lost') satisfies StopReason);
    };
    const heartbeat = setInterval(
      () => {
        if (renewing) return;
        renewing = true;
        renew()
          .catch((err: unknown) => {
            this.noteStoreFault(err);
            log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not renew the lease; trying again');
          })
          .finally(() => {
            renewing = false;
          });
      },
      Math.max(200, Math.floor(leaseMs / 3)),
    );
    heartbeat.unref();
    // a start may run one attempt's time; a generation at an upstream is timed by its own start (task-work.ts)
    const attemptTimer = checking ? undefined : setTimeout(() => controller.abort('attempt-timeout' satisfies StopReason), this.attemptTimeoutMs);
    attemptTimer?.unref();
    try {
      const work = this.work(task, controller, log, workDir);
      this.pause(checking ? await checkTask(work) : await startTask(work));
    } finally {
      ended = true;
      clearTimeout(attemptTimer);
      clearInterval(heartbeat);
      await fs.promises.rm(workDir, { recursive: true, force: true });
      if (this.opts.inputs) await this.removeInputsIfFinished(task.id, log);
    }
  }

  /**
   * A finished task's copies of caller media are removed; when the store or the storage cannot say
   * or do it now, the retention sweeper removes them later.
   */
  private async removeInputsIfFinished(taskId: string, log: Logger): Promise<void> {
    try {
      const status = (await this.opts.store.get(taskId))?.status;
      if (status === undefined || isFinished(status)) await this.opts.inputs!.removeFolder(taskId);
    } catch (err) {
      this.noteStoreFault(err);
      log.warn({ err: err instanceof Error ? err.message : String(err) }, "could not remove the task's copies of caller media; the retention sweep will");
    }
  }

  /** Records a store call that met an unreachable database (true), or says it was something else (false). */
  private noteStoreFault(err: unknown): boolean {
    if (!isStoreUnavailable(err)) return false;
    this.storeFaultAt = Date.now();
    return true;
  }

  /** The piece of work as task-work.ts sees it: its state changes wait out an unreachable database (G258). */
  private work(task: TaskRecord, controller: AbortController, log: Logger, workDir: string): Work {
    const store = patientTaskStore(this.opts.store, {
      log,
      giveUp: () => controller.signal.aborted && controller.signal.reason === 'shutdown',
      onStoreFault: (err) => this.noteStoreFault(err),
    });
    let lastProgress = task.progress;
    const ctx = {
      signal: controller.signal,
      log,
      workDir,
      readMedia: (ref, maxBytes) =>
        ref.stored && this.opts.inputs
          ? readBlobBytes(this.opts.inputs, task.id, ref.stored)
          : this.opts.fetchMedia(ref.url, ref.field, maxBytes, controller.signal),
      mediaUrl: (ref) => this.opts.mediaUrl(task.id, ref),
      reportProgress: (p) => {
        const value = Math.max(0, Math.min(99, Math.floor(p)));
        if (value <= lastProgress) return;
        lastProgress = value;
        // progress only rises in the store too (MAX), so writes that complete out of order lose nothing
        store.setProgress(task.id, this.workerId, value).catch((err: unknown) => log.warn({ err }, 'could not record progress'));
      },
    } satisfies ProviderContext;
    return {
      task,
      workerId: this.workerId,
      log,
      ctx,
      controller,
      job: jobOf(task, task.provider),
      progress: () => lastProgress,
      deps: { ...this.opts, store },
      attemptTimeoutMs: this.attemptTimeoutMs,
    };
  }

  /** After a fault of the gateway's own (G84): this worker claims nothing for a while. */
  private pause(ms: number | undefined): void {
    if (ms) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /**
   * Tasks whose worker stopped renewing (crash, kill -9): back to the queue, or failed when out of
   * attempts; a task with a generation at an upstream goes back to waiting for its check (G86).
   */
  async recoverLapsedLeases(now = Date.now()): Promise<number> {
    const { store, videosResultTtlHours, log } = this.opts;
    const limits = stepLimitsOf({ ...this.opts, attemptTimeoutMs: this.attemptTimeoutMs }, now);
    let recovered = 0;
    for (const task of await store.listLapsedLeases(now, 100)) {
      // the one decision table (G397): back to the queue (or to its check), or failed when out of attempts
      const { task: written } = await applyDecision({ store, videosResultTtlHours, log }, task, decide({ kind: 'lease-lapsed' }, task, limits), now);
      if (written) recovered++;
    }
    if (recovered > 0) {
      this.opts.log.warn({ recovered }, 'recovered tasks whose worker stopped');
      this.wake();
    }
    return recovered;
  }

  /** {@link recoverLapsedLeases} on the timer: a sweep still running is not overlapped; a failure is logged. */
  private sweepLapsedLeases(): void {
    if (this.recovering) return;
    // Leases lapse while the database cannot be reached, but their workers live: for one lease
    // period after this worker last met the outage, every live worker renews its leases, and only
    // then is a lapsed lease a dead worker's (G259).
    if (Date.now() - Math.max(this.storeFaultAt, this.opts.storeFaultAt?.() ?? 0) < this.opts.leaseMs) return;
    this.recovering = true;
    const { runAlone } = this.opts;
    (runAlone
      ? runAlone('lapsed-leases', async () => {
          await this.recoverLapsedLeases();
        })
      : this.recoverLapsedLeases()
    )
      .catch((err: unknown) => {
        if (!this.noteStoreFault(err)) this.opts.log.error({ err }, 'could not recover tasks whose worker stopped');
      })
      .finally(() => {
        this.recovering = false;
      });
  }
}
