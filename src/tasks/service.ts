import { allRefs } from '../contract/media-refs.js';
import { mediaLimitsFor } from '../contract/media-limits.js';
import type { SubmitPlan } from '../contract/submit-plan.js';
import type { MediaReviewer } from '../media/media-review.js';
import { authenticate, requireMayCreate } from '../auth/key-rules.js';
import { AppError } from '../errors.js';
import { newTaskId } from '../ids.js';
import type { Channels } from '../providers/channels.js';
import type { RouteCandidate } from '../contract/task-request.js';
import type { ProviderRegistry } from '../providers/registry.js';
import {
  idempotencyTaskKey,
  type ApiKeyRecord,
  type CreditStore,
  type InsertRefusal,
  type KeyStore,
  type NewTask,
  type TaskListQuery,
  type TaskRecord,
  type TaskStore,
} from '../store/types.js';

export type { TaskRecord } from '../store/types.js';
import { insufficientCredits } from '../credits/refusal.js';
import { PriceBook } from '../credits/prices.js';
import { toCredits } from '../credits/money.js';
import type { FamilyId } from '../contract/families.js';
import { takeCallbackUrl } from '../webhooks/callback-url.js';
import { expiryOf } from './expiry.js';
import type { IdempotencyClaim } from './idempotency.js';
import { cancelTask, isFinished } from './states.js';
import type { TaskWatch } from './task-watch.js';
import { currentTraceparent, noteOnCurrentSpan } from '../tracing/tracing.js';

export interface TaskServiceDeps {
  store: TaskStore;
  keys: KeyStore;
  providers: ProviderRegistry;
  /** Told about new tasks once they are committed, so a local worker can start on them at once. */
  onSubmitted?: (tasks: TaskRecord[]) => void;
  /** Told about a cancel so a local worker running the task stops it. */
  onCancelled?: (task: TaskRecord) => void;
  /** Queued + processing tasks one key may have (0: unlimited). */
  maxTasksInFlight?: number;
  /** MEDIAGATE_ALLOW_PRIVATE_URLS: webhook URLs naming private addresses are accepted too (G208). */
  allowPrivateUrls?: boolean;
  /** Long-poll waiters; without it `waitForTaskChange` answers at once. */
  watch?: TaskWatch;
  videosResultTtlHours: number;
  /** The channels' circuit breakers: a model whose channels all refuse calls is a 503 at submit. */
  channels?: Channels;
  /** Reviews caller media at submit (fetch once, probe, check the family's limits, keep the bytes). */
  media?: MediaReviewer;
  /**
   * Prices in force (G202) and whether an account that cannot pay is refused (G204), with the
   * balances to look at before reviewing media; absent: catalog prices, never refused.
   */
  credits?: { prices: PriceBook; enforce: boolean; balances?: Pick<CreditStore, 'getAccount'> };
  /** The clock keys' expiry is read against on the poll path (default `Date.now`). */
  now?: () => number;
  /** Told the owner of each task polled by its key's hash (its last-used time, G308). */
  onKeyUsed?: (keyId: string, now: number) => void;
}

const tooManyInFlight = (max: number, own: boolean): AppError =>
  new AppError(
    'too_many_tasks_in_flight',
    `This API key already has ${max} tasks queued or processing (${own ? 'its own limit, tasks_in_flight' : 'MEDIAGATE_MAX_TASKS_IN_FLIGHT'}); wait for some to finish`,
    { headers: { 'retry-after': '5' } },
  );

/** A key's bound on its tasks in flight: its own (G306), else the server's (0: unlimited). */
const inFlightBoundOf = (owner: Pick<ApiKeyRecord, 'maxInFlight'>, server: number): number => owner.maxInFlight ?? server;

const DEFAULT_PRICES = new PriceBook();

interface PendingInsert {
  task: NewTask;
  resolve: (task: TaskRecord) => void;
  reject: (err: unknown) => void;
}

/** What routes do with tasks: submit, look up (tenant-scoped). Status changes live in states.ts. */
export class TaskService {
  /** Submits of this event-loop turn, committed together (group commit) before any of them is answered. */
  private pending: PendingInsert[] = [];
  /**
   * Submits per key admitted here whose in-flight count or media review is awaited: not yet sent
   * to the store, so never in its count; the early check adds them (G198).
   */
  private readonly reviewing = new Map<string, number>();

  constructor(private readonly deps: TaskServiceDeps) {}

  /**
   * A create endpoint's submit: the webhook URL is taken out of the body (G208) before the family
   * plans the task from it, then {@link submitTask}.
   */
  async submitRequest<B>(
    request: { apiKey: ApiKeyRecord; body: B; idempotency?: IdempotencyClaim | undefined },
    plan: (body: B) => SubmitPlan,
  ): Promise<TaskRecord> {
    const callbackUrl = takeCallbackUrl(request.body, request.apiKey.webhookUrl, this.deps.allowPrivateUrls ?? false);
    return this.submitTask(request.apiKey, plan(request.body), request.idempotency, callbackUrl);
  }

  /**
   * Stores a new task; resolves once it is committed, so an answered submit is never lost.
   * Concurrent submits share one transaction: one WAL commit for many tasks.
   */
  async submitTask(owner: ApiKeyRecord, plan: SubmitPlan, claim?: IdempotencyClaim, callbackUrl: string | null = null): Promise<TaskRecord> {
    // every create path comes here: admin keys and models off the key's list stop before anything (G301, G304)
    requireMayCreate(owner, plan.family, plan.model);
    const providers = this.deps.providers;
    const route = providers.honouring(providers.routeModel(plan.model, plan.family), plan);
    this.checkChannels(route);
    const createdAt = Date.now();
    const id = newTaskId(createdAt);
    // counted from before the first await until it goes to the commit, so a burst of one key past
    // the in-flight bound is refused before its media are fetched
    this.countReviewing(owner.id, 1);
    const charge = (this.deps.credits?.prices ?? DEFAULT_PRICES).taskCharge(plan, owner.accountId);
    let media: SubmitPlan['media'];
    try {
      await this.checkInFlight(owner);
      const review = this.deps.media && allRefs(plan.media).length > 0;
      if (review) await this.checkBalance(charge.holdMicro, owner.accountId);
      media = review ? await this.deps.media!.review(id, owner.id, plan.media, mediaLimitsFor(plan)) : plan.media;
    } finally {
      this.countReviewing(owner.id, -1);
    }
    // the submit's span: the task's runs continue its trace (G229)
    noteOnCurrentSpan('mediagate.task_id', id);
    const traceparent = currentTraceparent();
    const task: NewTask = {
      id,
      ownerKeyId: owner.id,
      family: plan.family,
      form: plan.form,
      model: plan.model,
      provider: route[0]!.provider,
      // the route is kept with the task when there is a choice or a name to translate (G90)
      request: {
        params: plan.params,
        output: plan.output,
        media,
        ...((route.length > 1 || route[0]!.model !== undefined) && { route }),
        ...(traceparent !== undefined && { traceparent }),
      },
      // the price in force, as held: the operator's (MEDIAGATE_PRICES) where it differs from the contract's (G450)
      amount: toCredits(charge.holdMicro),
      // the price in force now is held with the task, in its transaction (G201)
      charge,
      createdAt,
      ...(claim && { idempotencyKey: idempotencyTaskKey(claim.keyId, claim.idemKey, claim.claimedAt) }),
      ...(callbackUrl !== null && { callbackUrl }),
      ...(owner.maxInFlight != null && { inFlightBound: owner.maxInFlight }),
    };
    const committed = new Promise<TaskRecord>((resolve, reject) => {
      this.pending.push({ task, resolve, reject });
      if (this.pending.length === 1)
        setImmediate(() => {
          void this.commitPending();
        });
    });
    if (media === plan.media) return committed;
    return committed.catch(async (err: unknown) => {
      await this.deps.media?.discard(id); // the reviewed copies of a task that was never stored
      throw err;
    });
  }

  /**
   * A 503 before anything is stored when no channel of the model's route takes calls now (each
   * has failed repeatedly and its circuit is open), with the time until one is tried again (G91).
   */
  private checkChannels(route: RouteCandidate[]): void {
    const channels = this.deps.channels;
    if (!channels || channels.usable(route).length > 0) return;
    const seconds = Math.max(1, Math.ceil(channels.retryAfterMs(route) / 1000));
    throw new AppError('upstream_unavailable', `No model provider for this model takes requests now; retry in ${seconds} s`, {
      headers: { 'retry-after': String(seconds) },
    });
  }

  /**
   * The early check of the in-flight bound (G198): the key's stored queued and processing tasks
   * plus its other submits under review here, read after the count (a submit gone to its commit
   * meanwhile is then in neither, never in both). It never counts a task twice, so it refuses only
   * what the commit's own check would refuse; submits on their way to a commit are left to that check.
   */
  private async checkInFlight(owner: ApiKeyRecord): Promise<void> {
    const max = inFlightBoundOf(owner, this.deps.maxTasksInFlight ?? 0);
    if (max <= 0) return;
    const stored = await this.deps.store.countInFlight(owner.id, max);
    const others = (this.reviewing.get(owner.id) ?? 1) - 1; // this submit is counted too
    if (stored + others >= max) throw tooManyInFlight(max, owner.maxInFlight != null);
  }

  /**
   * Before media are fetched for a submit its account cannot pay (credits enforced): the 402 at
   * once (G204). A look, not the check: the balance is checked again where the hold is written.
   */
  private async checkBalance(holdMicro: number, accountId: string): Promise<void> {
    const { enforce, balances } = this.deps.credits ?? {};
    if (!enforce || !balances) return;
    const account = await balances.getAccount(accountId);
    if (account && account.availableMicro < holdMicro) throw insufficientCredits(holdMicro, { refused: 'credits', availableMicro: account.availableMicro });
  }

  private countReviewing(keyId: string, change: 1 | -1): void {
    const n = (this.reviewing.get(keyId) ?? 0) + change;
    if (n > 0) this.reviewing.set(keyId, n);
    else this.reviewing.delete(keyId);
  }

  /** Commits the submits gathered in one event-loop turn; the next turn's may start their own meanwhile. */
  private async commitPending(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    let records: Array<TaskRecord | InsertRefusal>;
    try {
      // the bound and the balance again, where they hold across processes: checked with the inserts (G198, G200)
      records = await this.deps.store.insertWithinBound(
        batch.map((p) => p.task),
        {
          maxInFlight: this.deps.maxTasksInFlight ?? 0,
          enforceCredits: this.deps.credits?.enforce ?? false,
        },
      );
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    batch.forEach((p, i) => {
      const record = records[i]!;
      if (!('refused' in record)) p.resolve(record);
      else if (record.refused === 'in_flight')
        p.reject(tooManyInFlight(p.task.inFlightBound ?? this.deps.maxTasksInFlight ?? 0, p.task.inFlightBound !== undefined));
      else p.reject(insufficientCredits(p.task.charge?.holdMicro ?? 0, record));
    });
    const committed = records.filter((r): r is TaskRecord => !('refused' in r));
    if (committed.length > 0) this.deps.onSubmitted?.(committed);
  }

  /**
   * The poll path: authentication and lookup in one query by the key's hash. On a miss the key is
   * looked up alone, to answer 401 for a bad key and 404 for a task that is not the caller's.
   */
  async getTaskForKeyHash(keyHash: string, id: string): Promise<TaskRecord> {
    const now = (this.deps.now ?? Date.now)();
    const task = await this.deps.store.getOwnedByKeyHash(id, keyHash, now);
    if (task) {
      this.deps.onKeyUsed?.(task.ownerKeyId, now);
      return task;
    }
    // 401 for an unknown, revoked or expired key (G305); a secret in its grace after a rotation
    // (G307) is not matched by the lookup above: its key's task is read by the key's id
    const key = await authenticate(this.deps.keys, keyHash, now);
    const owned = key.graceUntil === undefined ? undefined : await this.deps.store.getOwned(id, key.id);
    if (owned) {
      this.deps.onKeyUsed?.(key.id, now);
      return owned;
    }
    throw new AppError('task_not_found', `No task with id ${id}`, { param: 'id' });
  }

  /**
   * Long-poll: the task again once its status is no longer `task.status`, or after `ms`, or when
   * the client goes away; a finished task at once. Read with the key's hash again, so a key
   * revoked or a task deleted meanwhile answers 401/404.
   */
  async waitForTaskChange(keyHash: string, task: TaskRecord, ms: number, signal: AbortSignal): Promise<TaskRecord> {
    if (!this.deps.watch || isFinished(task.status)) return task;
    await this.deps.watch.waitForChange(task.id, task.status, task.ownerKeyId, ms, signal);
    return this.getTaskForKeyHash(keyHash, task.id);
  }

  /** The caller's task; another key's task is a 404 exactly like an unknown id (D6). */
  /** A page of a key's tasks (`GET /v1/tasks`; the query is built by task-list.ts). */
  list(query: TaskListQuery): Promise<TaskRecord[]> {
    return this.deps.store.listTasks(query);
  }

  async getOwnedTask(owner: ApiKeyRecord, id: string): Promise<TaskRecord> {
    const task = await this.deps.store.getOwned(id, owner.id);
    if (!task) throw new AppError('task_not_found', `No task with id ${id}`, { param: 'id' });
    return task;
  }

  /**
   * Cancels a queued or processing task of the caller (D23); a completed or failed task
   * is a 409. Cancelling a cancelled task answers it again (G113: safe to retry after a lost reply).
   * A worker running it is told to stop; its late result is refused by the conditional update.
   * With `family`, a task of another family is a 409 (the motion cancel endpoint cancels motion tasks).
   */
  async cancelOwnedTask(owner: ApiKeyRecord, id: string, family?: FamilyId): Promise<TaskRecord> {
    const task = await this.getOwnedTask(owner, id);
    if (family !== undefined && task.family !== family) {
      throw new AppError('invalid_task_state', `Task ${task.id} is a ${task.family} task; only ${family} tasks can be cancelled`, { param: 'id' });
    }
    if (task.status === 'cancelled') return task;
    return (await this.cancelFound(task)).task;
  }

  /** Any tenant's task by id (the admin API), or undefined. */
  peek(id: string): Promise<TaskRecord | undefined> {
    return this.deps.store.get(id);
  }

  /**
   * Cancels any tenant's task (the admin API, G319), as the caller's cancel does; `refusal` may
   * forbid it (a 409 with its text). `cancelled`: whether this call cancelled it (not: it was already).
   */
  async cancelAnyTask(id: string, refusal?: (task: TaskRecord) => string | undefined): Promise<{ task: TaskRecord; cancelled: boolean }> {
    const task = await this.deps.store.get(id);
    if (!task) throw new AppError('task_not_found', `No task with id ${id}`, { param: 'id' });
    if (task.status === 'cancelled') return { task, cancelled: false };
    const why = isFinished(task.status) ? undefined : refusal?.(task);
    if (why !== undefined) throw new AppError('invalid_task_state', why, { param: 'id' });
    return this.cancelFound(task);
  }

  private async cancelFound(task: TaskRecord): Promise<{ task: TaskRecord; cancelled: boolean }> {
    const now = Date.now();
    const cancelled = await cancelTask(this.deps.store, task, expiryOf(task.family, 'cancelled', now, this.deps.videosResultTtlHours), now);
    if (!cancelled) {
      const current = (await this.deps.store.get(task.id)) ?? task;
      if (current.status === 'cancelled') return { task: current, cancelled: false }; // a concurrent cancel got there first
      throw new AppError('invalid_task_state', `Task ${task.id} is ${current.status}; only queued or processing tasks can be cancelled`, { param: 'id' });
    }
    this.deps.onCancelled?.(cancelled);
    return { task: cancelled, cancelled: true };
  }
}
