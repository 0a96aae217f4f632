import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { FsBlobStore } from '../media/blob-store.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Provider, ProviderContext, ProviderJob, ProviderOutput } from '../providers/types.js';
import type { ResultFile, TaskRecord, TaskStore } from '../store/types.js';
import { failureMessage, MAX_SERVER_FAULTS, retryDelayMs, serverFaultDelayMs, serverFaultOf, shouldRetry } from './backoff.js';
import { expiryOf } from './expiry.js';
import { claimNextTask, completeTask, failLapsedTask, failTask, isFinished, recoverLapsedTask, requeueTask } from './states.js';

export interface RunnerOptions {
  store: TaskStore;
  providers: ProviderRegistry;
  blobs: FsBlobStore;
  log: Logger;
  /** Scratch space for provider work folders. */
  tmpDir: string;
  concurrency: number;
  maxAttempts: number;
  leaseMs: number;
  videosResultTtlHours: number;
  /** Fetches a caller URL the task holds no reviewed copy of (the safe fetcher). */
  fetchMedia: (url: string, field: string, maxBytes: number, signal: AbortSignal) => Promise<Buffer>;
  /** `<data>/inputs`: the reviewed copies of caller media (media/media-review.ts); removed once the task is finished. */
  inputs?: FsBlobStore;
  credentials?: (providerId: string) => Record<string, string>;
  /** Longest one attempt may run; then it is stopped and counts as a retryable failure (default 30 min). */
  attemptTimeoutMs?: number;
  /** How often to look for work from other processes and due retries. */
  pollMs?: number;
  /** The gateway's own resources (disk, descriptors): nothing is claimed while one is short (G84). */
  resources?: { check(): { ok: boolean; problems: string[] } };
}

/** `video.mp4` -> `video.<token>.mp4`. */
export function attemptFileName(name: string, token: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.${token}${name.slice(dot)}` : `${name}.${token}`;
}

type StopReason = 'shutdown' | 'lease-lost' | 'cancelled' | 'attempt-timeout';

/** Settles when `signal` aborts (rejecting with its reason): a provider that ignores the signal is not waited for. */
function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

interface Running {
  task: TaskRecord;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Runs queued tasks: claims them with a lease, renews the lease while the provider works, stores
 * what it made and finishes the task through `states.ts`. Tasks whose worker died (lease lapsed)
 * go back to the queue, up to `maxAttempts`, then fail with a clear error.
 */
export class TaskRunner {
  readonly workerId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly running = new Map<string, Running>();
  private readonly activeByProvider = new Map<string, number>();
  private get attemptTimeoutMs(): number { return this.opts.attemptTimeoutMs ?? 30 * 60_000; }
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;
  private started = false;
  private fillScheduled = false;
  private dueTimer: NodeJS.Timeout | undefined;
  /** No claims before this time: the gateway just hit one of its own faults (G84). */
  private pausedUntil = 0;
  /** Whether the last fill found a resource short (to log changes, not every fill). */
  private short = false;

  constructor(private readonly opts: RunnerOptions) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.recoverLapsedLeases();
    this.timers.push(setInterval(() => this.fill(), this.opts.pollMs ?? 1000));
    this.timers.push(setInterval(() => this.recoverLapsedLeases(), Math.max(500, Math.floor(this.opts.leaseMs / 3))));
    for (const t of this.timers) t.unref();
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
   * Graceful stop: claim nothing more, let running tasks finish for up to `graceMs`, then abort the
   * rest and return them to the queue (their attempt is given back).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.dueTimer) clearTimeout(this.dueTimer);
    const all = Promise.all([...this.running.values()].map((r) => r.done));
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([all.then(() => 'done' as const), timeout])) === 'timeout') {
      for (const r of this.running.values()) r.controller.abort('shutdown' satisfies StopReason);
      await all;
    }
  }

  private providerIds(): string[] {
    return this.opts.providers.ids();
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

  private fill(): void {
    if (this.stopping || !this.mayClaim()) return;
    for (const id of this.providerIds()) {
      const provider = this.opts.providers.get(id)!;
      while ((this.activeByProvider.get(id) ?? 0) < this.slots(provider)) {
        const task = claimNextTask(this.opts.store, [id], this.workerId, this.opts.leaseMs);
        if (!task) break;
        this.launch(provider, task);
      }
    }
    this.scheduleDueRetry();
  }

  /** Wakes up when the earliest backed-off task becomes due (sooner than the poll interval). */
  private scheduleDueRetry(): void {
    const next = this.opts.store.nextRunAfter(this.providerIds());
    if (next === undefined || this.dueTimer) return;
    const delay = next - Date.now();
    if (delay <= 0 || delay > (this.opts.pollMs ?? 1000)) return;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.fill();
    }, delay + 5);
    this.dueTimer.unref();
  }

  private launch(provider: Provider, task: TaskRecord): void {
    this.activeByProvider.set(provider.id, (this.activeByProvider.get(provider.id) ?? 0) + 1);
    const controller = new AbortController();
    const entry: Running = { task, controller, done: Promise.resolve() };
    this.running.set(task.id, entry);
    entry.done = this.run(provider, task, controller)
      .catch((err: unknown) => this.opts.log.error({ err, taskId: task.id }, 'task runner fault'))
      .finally(() => {
        this.running.delete(task.id);
        this.activeByProvider.set(provider.id, (this.activeByProvider.get(provider.id) ?? 1) - 1);
        this.wake();
      });
  }

  private async run(provider: Provider, task: TaskRecord, controller: AbortController): Promise<void> {
    const { store, log: baseLog, leaseMs } = this.opts;
    const log = baseLog.child({ taskId: task.id, provider: provider.id, attempt: task.attempts });
    let workDir: string;
    try {
      workDir = await fs.promises.mkdtemp(path.join(this.opts.tmpDir, `${task.id}-`));
    } catch (err) {
      // the task has not started: whatever stops the gateway from making a folder is its own fault
      this.deferForServerFault(task, err, serverFaultOf(err) ?? (err as NodeJS.ErrnoException).code ?? 'unknown', log);
      return;
    }
    const heartbeat = setInterval(() => {
      if (!store.renewLease(task.id, this.workerId, Date.now() + leaseMs)) {
        const current = store.get(task.id);
        controller.abort((current?.status === 'cancelled' ? 'cancelled' : 'lease-lost') satisfies StopReason);
      }
    }, Math.max(200, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    const job: ProviderJob = {
      taskId: task.id, family: task.family, form: task.form, model: task.model,
      params: task.request.params, output: task.request.output, media: task.request.media, attempt: task.attempts,
    };
    let lastProgress = 0;
    const ctx: ProviderContext = {
      signal: controller.signal,
      log,
      workDir,
      credentials: this.opts.credentials?.(provider.id) ?? {},
      readMedia: (ref, maxBytes) => (ref.stored && this.opts.inputs
        ? fs.promises.readFile(this.opts.inputs.pathOf(task.id, ref.stored))
        : this.opts.fetchMedia(ref.url, ref.field, maxBytes, controller.signal)),
      reportProgress: (p) => {
        const value = Math.max(0, Math.min(99, Math.floor(p)));
        if (value <= lastProgress) return;
        lastProgress = value;
        store.setProgress(task.id, this.workerId, value);
      },
    };
    log.info({ model: task.model }, 'task started');
    const attemptTimer = setTimeout(() => controller.abort('attempt-timeout' satisfies StopReason), this.attemptTimeoutMs);
    attemptTimer.unref();
    try {
      const output = await Promise.race([provider.submit(job, ctx), whenAborted(controller.signal)]);
      controller.signal.throwIfAborted();
      await this.finish(task, output, log);
    } catch (err) {
      await this.handleFailure(provider, task, job, ctx, err, log);
    } finally {
      clearTimeout(attemptTimer);
      clearInterval(heartbeat);
      await fs.promises.rm(workDir, { recursive: true, force: true });
      const status = store.get(task.id)?.status;
      if (this.opts.inputs && (status === undefined || isFinished(status))) await this.opts.inputs.removeTask(task.id);
    }
  }

  /**
   * Stores what the provider made and completes the task. Each attempt writes its files under
   * names of its own (`video.<attempt token>.mp4`), so a late worker that lost the task can never
   * overwrite the files of the attempt that completed it; a refused completion removes its files.
   */
  private async finish(task: TaskRecord, output: ProviderOutput, log: Logger): Promise<void> {
    const files: ResultFile[] = [];
    const token = randomBytes(4).toString('hex');
    for (const f of output.files) {
      const name = attemptFileName(f.name, token);
      const bytes = await this.opts.blobs.put(task.id, name, 'data' in f ? { data: f.data } : { path: f.path });
      files.push({
        name, contentType: f.contentType, bytes,
        ...(f.width !== undefined && { width: f.width }), ...(f.height !== undefined && { height: f.height }),
        ...(f.duration !== undefined && { duration: f.duration }),
      });
    }
    const result = {
      files,
      ...(output.actualDuration !== undefined && { actualDuration: output.actualDuration }),
      ...(output.upstreamUrls !== undefined && { upstreamUrls: output.upstreamUrls }),
    };
    const now = Date.now();
    const done = completeTask(this.opts.store, task, this.workerId, result, expiryOf(task.family, 'completed', now, this.opts.videosResultTtlHours)!, now);
    if (done) {
      log.info({ ms: now - (task.startedAt ?? now) }, 'task completed');
    } else {
      // Cancelled, or another worker took over after our lease lapsed: our files are not the result.
      for (const f of files) await this.opts.blobs.remove(task.id, f.name);
      log.warn({ status: this.opts.store.get(task.id)?.status }, 'finished generation but no longer held the task');
    }
  }

  private async handleFailure(provider: Provider, task: TaskRecord, job: ProviderJob, ctx: ProviderContext, err: unknown, log: Logger): Promise<void> {
    const { store, maxAttempts } = this.opts;
    const reason = ctx.signal.aborted ? (ctx.signal.reason as StopReason) : undefined;
    if (reason === 'attempt-timeout') {
      const seconds = Math.round(this.attemptTimeoutMs / 1000);
      err = new AppError('upstream_timeout', `generation did not finish within ${seconds} s (attempt ${task.attempts} of ${maxAttempts})`, { retryable: true });
    }
    if (reason === 'cancelled') {
      log.info('task cancelled while running');
      if (provider.cancel) await provider.cancel(job, ctx).catch((e: unknown) => log.warn({ err: e }, 'provider cancel failed'));
      return;
    }
    if (reason === 'lease-lost') {
      log.warn('lost the lease; another worker owns the task now');
      return;
    }
    if (reason === 'shutdown') {
      requeueTask(store, task, this.workerId, Date.now(), { refundAttempt: true });
      log.info('returned to the queue on shutdown');
      return;
    }
    const fault = serverFaultOf(err);
    if (fault) {
      this.deferForServerFault(task, err, fault, log);
      return;
    }
    const now = Date.now();
    if (shouldRetry(err, task.attempts, maxAttempts)) {
      const delay = retryDelayMs(task.attempts);
      requeueTask(store, task, this.workerId, now + delay);
      log.warn({ err, retryInMs: delay }, 'attempt failed; will retry');
      return;
    }
    const message = failureMessage(err);
    failTask(store, task, this.workerId, message, expiryOf(task.family, 'failed', now, this.opts.videosResultTtlHours), now);
    log.warn({ error: message }, 'task failed');
  }

  /**
   * The gateway was short of a resource (disk, descriptors, memory) while running the task: not the
   * task's fault, so its attempt is given back and the fault counted apart; it runs again after a
   * pause, and this worker claims nothing during that pause. After {@link MAX_SERVER_FAULTS} such
   * faults (about 15 minutes of them) the task fails, saying so (G84).
   */
  private deferForServerFault(task: TaskRecord, err: unknown, code: string, log: Logger): void {
    const now = Date.now();
    const faults = task.serverFaults + 1;
    if (faults > MAX_SERVER_FAULTS) {
      const message = `the gateway could not run this task: it was short of a resource of its own (${code}) each of the last ${MAX_SERVER_FAULTS} times it tried; nothing in the request caused it, submit it again`;
      failTask(this.opts.store, task, this.workerId, message, expiryOf(task.family, 'failed', now, this.opts.videosResultTtlHours), now);
      log.error({ err, code }, 'task failed: the gateway kept failing to run it');
      return;
    }
    const delay = serverFaultDelayMs(faults);
    this.pausedUntil = Math.max(this.pausedUntil, now + delay);
    requeueTask(this.opts.store, task, this.workerId, now + delay, { serverFault: true });
    log.error({ err, code, retryInMs: delay, serverFaults: faults }, 'the gateway is short of a resource; the task goes back to the queue without using an attempt');
  }

  /** Tasks whose worker stopped renewing (crash, kill -9): back to the queue, or failed when out of attempts. */
  recoverLapsedLeases(now = Date.now()): number {
    const { store, maxAttempts } = this.opts;
    let recovered = 0;
    for (const task of store.listLapsedLeases(now, 100)) {
      if (task.attempts >= maxAttempts) {
        const error = `generation did not finish: the worker running it stopped responding ${task.attempts} time(s); giving up`;
        if (failLapsedTask(store, task, error, expiryOf(task.family, 'failed', now, this.opts.videosResultTtlHours), now)) recovered++;
      } else if (recoverLapsedTask(store, task, now)) {
        recovered++;
      }
    }
    if (recovered > 0) {
      this.opts.log.warn({ recovered }, 'recovered tasks whose worker stopped');
      this.wake();
    }
    return recovered;
  }
}
