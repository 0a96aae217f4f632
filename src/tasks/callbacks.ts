/**
 * Provider callbacks (G157-G158): an upstream's notice that a generation ended, taken
 * at `POST /v1/provider-callbacks/{provider}/{task}`. A notice never carries the outcome: once its
 * provider finds it signed by the upstream (and recent), it only brings the task's next check
 * forward to now, and the check reads the outcome from the upstream as any check does. So a forged
 * notice (refused: 401), a replayed one (signed too long ago: 401; or a delivery already taken:
 * answered, nothing done) and one for a task that is not waiting for that generation change
 * nothing. A task a worker holds (a check or its start in progress) is brought forward once the
 * worker lets it go, looked at every `retryMs` for up to `waitMs`. Polling goes on regardless: a
 * notice that never comes costs only the time until the next check.
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { ChannelError, type CallbackCheck, type CallbackDelivery } from '../providers/types.js';
import type { TaskStore } from '../store/types.js';
import { SeenDeliveries } from './seen-deliveries.js';
import { checkSooner } from './states.js';

/** The route's path (Fastify's form). */
export const CALLBACK_ROUTE = '/v1/provider-callbacks/:provider/:task';

/** Where `providerId`'s upstream notifies the end of `taskId`'s generation. */
export function callbackUrlOf(publicUrl: string, providerId: string, taskId: string): string {
  return `${publicUrl}/v1/provider-callbacks/${encodeURIComponent(providerId)}/${encodeURIComponent(taskId)}`;
}

/**
 * What a verified notice did: the check brought forward to now (`check_sooner`), or once the worker
 * holding the task lets it go (`after_current_work`); nothing, as a delivery already taken
 * (`duplicate`) or about a task not waiting for that generation (`not_waiting`: unknown, finished,
 * another generation, another provider).
 */
export type CallbackOutcome = 'check_sooner' | 'after_current_work' | 'duplicate' | 'not_waiting';

export interface CallbackReceiverOptions {
  store: TaskStore;
  providers: ProviderRegistry;
  log: Logger;
  /** Looks for work now (the in-process worker, if there is one; others find the due check at their next poll). */
  wake: () => void;
  now?: () => number;
  /** How often a held task is looked at again, ms (default 250). */
  retryMs?: number;
  /** How long a held task is waited for, ms (default 90 s: longer than a check may take). */
  waitMs?: number;
  /** Held tasks waited for at once (default 10 000); past that a notice is answered 429, to be delivered again. */
  maxWaiting?: number;
}

type TaskState = 'waiting' | 'held' | 'gone';

export class CallbackReceiver {
  private readonly seen = new SeenDeliveries();
  private readonly waiting = new Map<string, NodeJS.Timeout>();
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly opts: CallbackReceiverOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Takes a delivery: throws the AppError to answer for one that is refused (never for a verified one). */
  async receive(providerId: string, taskId: string, delivery: CallbackDelivery): Promise<CallbackOutcome> {
    const { log } = this.opts;
    const provider = this.opts.providers.get(providerId);
    if (!provider?.callbacks) throw new AppError('route_not_found', `No provider "${providerId}" of this gateway takes callbacks`, { param: 'provider' });
    let check: CallbackCheck;
    try {
      check = await provider.callbacks.verify(delivery, this.now());
    } catch (err) {
      if (!(err instanceof ChannelError)) throw err;
      log.warn({ provider: providerId, taskId, err: err.message }, "provider callback: the upstream's signing keys cannot be had");
      throw new AppError(
        'upstream_unavailable',
        `The signing keys of provider "${providerId}" cannot be had now, so the delivery cannot be checked; deliver it again later`,
        { headers: { 'retry-after': '30' } },
      );
    }
    if (!check.valid) {
      log.warn({ provider: providerId, taskId, refused: check.kind, header: check.header }, 'provider callback refused');
      if (check.kind === 'malformed') throw new AppError('invalid_request', check.message, { ...(check.header && { param: check.header }) });
      throw new AppError('invalid_callback_signature', check.message, { ...(check.header && { param: check.header }) });
    }
    const delivered = `${providerId} ${taskId} ${check.deliveryId}`;
    if (!this.seen.take(delivered, this.now())) {
      log.info({ provider: providerId, taskId, upstreamId: check.upstreamId }, 'provider callback: a delivery already taken; nothing done');
      return 'duplicate';
    }
    let outcome: CallbackOutcome | undefined;
    try {
      outcome = await this.bringForward(providerId, taskId, check.upstreamId);
    } finally {
      if (outcome === undefined) this.seen.forget(delivered); // not acted on: its repeat is taken
    }
    if (outcome === undefined)
      throw new AppError('rate_limited', 'Too many notices wait for tasks a worker holds; deliver this one again later', { headers: { 'retry-after': '5' } });
    log.info({ provider: providerId, taskId, upstreamId: check.upstreamId, outcome }, 'provider callback taken');
    return outcome;
  }

  /** Stops waiting for held tasks (shutdown): their next checks come as scheduled. */
  close(): void {
    this.closed = true;
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  /** Whether the task waits for a check of that generation at that provider, is held by a worker, or neither. */
  private async stateOf(providerId: string, taskId: string, upstreamId: string): Promise<TaskState> {
    const task = await this.opts.store.get(taskId);
    if (task?.status !== 'processing') return 'gone';
    const ref = task.upstream?.ref;
    if (ref !== undefined && (ref.id !== upstreamId || task.upstream?.provider !== providerId)) return 'gone';
    if (task.leaseOwner !== null) return 'held'; // a check, or the start whose generation this may be
    return ref === undefined ? 'gone' : 'waiting';
  }

  /** Brings the check forward now, or once the worker lets the task go; undefined when too many wait already. */
  private async bringForward(providerId: string, taskId: string, upstreamId: string): Promise<CallbackOutcome | undefined> {
    const state = await this.stateOf(providerId, taskId, upstreamId);
    if (state === 'waiting' && (await checkSooner(this.opts.store, taskId, upstreamId, this.now()))) {
      this.opts.wake();
      return 'check_sooner';
    }
    // (a worker may have taken it between the look and the update)
    if (state === 'gone' || (await this.stateOf(providerId, taskId, upstreamId)) !== 'held') return 'not_waiting';
    if (this.waiting.has(taskId)) return 'after_current_work';
    if (this.waiting.size >= (this.opts.maxWaiting ?? 10_000)) return undefined;
    this.afterCurrentWork(providerId, taskId, upstreamId, this.now() + (this.opts.waitMs ?? 90_000));
    return 'after_current_work';
  }

  private afterCurrentWork(providerId: string, taskId: string, upstreamId: string, until: number): void {
    // the task stays in `waiting` while it is looked at, so a repeated notice meanwhile waits with it
    const timer = setTimeout(() => {
      void this.lookAgain(providerId, taskId, upstreamId, until)
        .catch((err: unknown) => {
          this.opts.log.warn({ err, taskId }, 'provider callback: could not bring the check forward');
          return false;
        })
        .then((again) => {
          if (this.waiting.get(taskId) === timer) this.waiting.delete(taskId);
          if (again && !this.closed) this.afterCurrentWork(providerId, taskId, upstreamId, until);
        });
    }, this.opts.retryMs ?? 250);
    timer.unref();
    this.waiting.set(taskId, timer);
  }

  /** One look at a held task: brings its check forward if the worker let it go; true to look again later. */
  private async lookAgain(providerId: string, taskId: string, upstreamId: string, until: number): Promise<boolean> {
    const state = await this.stateOf(providerId, taskId, upstreamId);
    if (state === 'waiting' && (await checkSooner(this.opts.store, taskId, upstreamId, this.now()))) {
      this.opts.log.info({ provider: providerId, taskId, upstreamId }, 'provider callback: check brought forward once the worker let the task go');
      this.opts.wake();
      return false;
    }
    return state !== 'gone' && this.now() < until;
  }
}
