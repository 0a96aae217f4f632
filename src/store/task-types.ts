/** The task records and the task store: what a task is, its transitions' guards and patches, the queue's reads. Part of the store contract (types.ts). */
import type { FamilyForm, FamilyId } from '../contract/families.js';
import type { TaskRequest, UpstreamRef } from '../contract/task-request.js';

export type TaskStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** One stored output file of a task, under `<dataDir>/results/`. */
export interface ResultFile {
  /** File name inside the task's result folder, e.g. `image.png`. */
  name: string;
  contentType: string;
  bytes: number;
  width?: number;
  height?: number;
  /** Seconds, for video and audio. */
  duration?: number;
}

export interface TaskResult {
  files: ResultFile[];
  /** Length of the produced video in seconds, where the family reports it. */
  actualDuration?: number;
  /** Where re-hosted files came from (an upstream's URLs): kept for operators, never shown to callers (G88). */
  sourceUrls?: string[];
}

/** A task's generations at an upstream (G86). */
export interface UpstreamState {
  /** Which generation: 0 the first, one more after each generation that failed. */
  generation: number;
  /** The provider (channel) that accepted the current generation, and its reference; absent between generations. */
  provider?: string;
  ref?: UpstreamRef;
  /** When the current generation was started (Unix ms): it may run `MEDIAGATE_ATTEMPT_TIMEOUT_SECONDS`. */
  startedAt?: number;
  /** Checks of the current generation in a row that could not be made (network, 5xx): later checks back off. */
  checkFailures: number;
  /**
   * Checks of the current generation in a row whose answer could not be used (malformed, an
   * unknown status: `UnexpectedReply`); absent when none. At `MAX_REPLY_PROBLEMS` the task fails (G272).
   */
  replyProblems?: number;
  /**
   * When the task first went back to the queue because no channel of its route could take it
   * (Unix ms); absent once one took it. While queued with it, its query reply says
   * `queue_reason: "upstream_unavailable"`; `MEDIAGATE_UNAVAILABLE_FAIL_SECONDS` after it, it fails (G274).
   */
  unavailableSince?: number;
}

export interface TaskRecord {
  id: string;
  ownerKeyId: string;
  family: FamilyId;
  /** Request form within a family (`A`/`B` for clip and reel), or null. */
  form: FamilyForm;
  model: string;
  provider: string;
  /** The validated, normalised request the provider receives. */
  request: TaskRequest;
  status: TaskStatus;
  progress: number;
  result: TaskResult | null;
  error: string | null;
  /** Credits charged for the task. */
  amount: number;
  /** The hold written at submit and settled by the terminal transition (G200), or null (tasks from before credits). */
  charge: TaskCharge | null;
  /** Unix milliseconds. */
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  attempts: number;
  /** Times the task went back to the queue because the gateway itself was short of a resource (G84). */
  serverFaults: number;
  /** Its generation at an upstream, once a provider started one; null for tasks made on the spot (the sandbox). */
  upstream: UpstreamState | null;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** Not claimable before this time (retry backoff). */
  runAfter: number;
  /** When the result (and for some families the task) is deleted; null until finished. */
  expiresAt: number | null;
  /** Where its terminal state is POSTed (G208): the URL in force at submit, or null. */
  callbackUrl: string | null;
}

/**
 * What a task holds of its account's credits (G200-G202), in micro-credits (1 credit = 1,000,000):
 * the price in force at submit, kept with the task and used to settle it.
 */
export interface TaskCharge {
  accountId: string;
  /** Held at submit: the whole price (per-second models: for the requested duration). */
  holdMicro: number;
  /** Per-second models: the price of one second of output, to settle to the actual duration; null otherwise. */
  perSecondMicro: number | null;
}

export type NewTask = Pick<TaskRecord, 'id' | 'ownerKeyId' | 'family' | 'form' | 'model' | 'provider' | 'request' | 'amount' | 'createdAt'> & {
  /** The Idempotency-Key claim of the request that created it (`idempotencyTaskKey`), committed with the task. */
  idempotencyKey?: string;
  /** The hold to write with the task (absent: none). */
  charge?: TaskCharge;
  /** The webhook URL in force at submit (G208; absent: none). */
  callbackUrl?: string | null;
  /** The owner key's own in-flight bound (G306), over `InsertBounds.maxInFlight` (0: unlimited). */
  inFlightBound?: number;
};

/**
 * Money moved by a terminal transition, in the same transaction as the status change (G201): the
 * task's hold is captured (`amountMicro` of it, at most the hold; the rest goes back) or released.
 */
export type Settlement = { kind: 'capture'; amountMicro: number } | { kind: 'release' };

/** Why `insertWithinBound` left a task out. */
export type InsertRefusal =
  | { refused: 'in_flight' }
  /** The account's available credit (micro-credits) when the task came to be held. */
  | { refused: 'credits'; availableMicro: number }
  /** The key's spending cap and what its holds and charges already came to (G207). */
  | { refused: 'key_cap'; capMicro: number; usedMicro: number };

/** Why a chat request's hold was refused. */
export type HoldRefusal = Exclude<InsertRefusal, { refused: 'in_flight' }>;

/** What `insertWithinBound` checks besides inserting. */
export interface InsertBounds {
  /** Queued + processing tasks per key (0: unlimited). */
  maxInFlight: number;
  /** Refuse a task whose hold exceeds its account's available credit (MEDIAGATE_CREDITS=on). */
  enforceCredits: boolean;
}

/** One group of `TaskStore.liveCounts`. */
export interface LiveTaskCount {
  family: FamilyId;
  model: string;
  status: 'queued' | 'processing';
  count: number;
  /** The group's oldest task's `createdAt`, Unix ms. */
  oldestCreatedAt: number;
}

/** Fields a state change may set together with the new status. */
export type TaskPatch = Partial<
  Pick<
    TaskRecord,
    | 'attempts'
    | 'serverFaults'
    | 'status'
    | 'progress'
    | 'result'
    | 'error'
    | 'startedAt'
    | 'finishedAt'
    | 'leaseOwner'
    | 'leaseExpiresAt'
    | 'runAfter'
    | 'expiresAt'
    | 'provider'
    | 'upstream'
  >
>;

/**
 * What a requeue or a new generation may write besides the patch: the error of the attempt that
 * ended (kept for the task's timeline, G318; never shown to its caller).
 */
export type TaskPatchWithNote = TaskPatch & { attemptError?: string | null };

/** The guard of a conditional update: the row changes only while all of these hold. */
export interface TaskGuard {
  statusIn: readonly TaskStatus[];
  /** Only while this worker holds the lease. */
  leaseOwner?: string;
  /** Only while the lease ran out before this time (Unix ms). */
  leaseExpiredBefore?: number;
  /** Only while no worker holds a lease on the task. */
  unleased?: boolean;
  /** Only while the task's current generation at its upstream is this one (`upstream.ref.id`). */
  upstreamId?: string;
}

/** What `listTasks` reads: one key's tasks, newest first (keyset pagination on (createdAt, id)). */
export interface TaskListQuery {
  ownerKeyId: string;
  /** Only tasks in one of these statuses (absent or empty: any). */
  statuses?: readonly TaskStatus[];
  /** Only tasks of one of these families (absent or empty: any). */
  families?: readonly FamilyId[];
  model?: string;
  /** Only tasks created after this time (Unix ms, exclusive). */
  createdAfter?: number;
  /** Only tasks that sort after this position in (createdAt DESC, id DESC): the last item of the previous page. */
  before?: { createdAt: number; id: string };
  /** At most this many (1 or more). */
  limit: number;
}

export interface TaskStore {
  /**
   * Inserts several tasks in one transaction (group commit of concurrent submits): all or none,
   * except that a task whose owner already has `maxInFlight` queued or processing
   * tasks (those inserted before it in this call counted) is left out, and so (with
   * `enforceCredits`) is a task whose hold exceeds its account's available credit (holds before it
   * in this call counted): its refusal in its place; the others are inserted together, each with
   * its hold in the ledger. The counts, the balances and the inserts are one transaction, serialised
   * per key and per account across every process sharing the store, so concurrent submits cannot
   * pass the bound or overdraw an account together (G198, G200).
   */
  insertWithinBound(tasks: readonly NewTask[], bounds: InsertBounds): Promise<Array<TaskRecord | InsertRefusal>>;
  /**
   * The task only if the active (not revoked, not expired at `now`: G305) key with this SHA-256 hash
   * owns it: the poll path's one query for authentication and lookup together. A secret a rotation
   * replaced (G307) is not matched here: the caller looks such a key up on a miss.
   */
  getOwnedByKeyHash(id: string, keyHash: string, now?: number): Promise<TaskRecord | undefined>;
  get(id: string): Promise<TaskRecord | undefined>;
  /** The task only if `ownerKeyId` owns it (tenant isolation lives in the query). */
  getOwned(id: string, ownerKeyId: string): Promise<TaskRecord | undefined>;
  /**
   * One page of a key's tasks, newest first: ordered by createdAt then id, both descending, read
   * from the position `before` on (never an offset, so tasks inserted meanwhile move no item from
   * one page to another).
   */
  listTasks(query: TaskListQuery): Promise<TaskRecord[]>;

  // -- used only by tasks/states.ts: every status change is one conditional update --
  /**
   * Applies `patch` iff the guard holds; returns the updated row, or undefined when it did not.
   * With `settle` (a terminal transition), the task's hold (if it has one) is settled in the same
   * transaction: money moves only when this update wins (G201); and so, when the task has a
   * callback URL, its webhook delivery is queued (G210): exactly once, by the winner.
   */
  updateIf(id: string, guard: TaskGuard, patch: TaskPatchWithNote, settle?: Settlement): Promise<TaskRecord | undefined>;
  /**
   * Leases the next piece of work of these providers to `workerId`: a due check of a generation
   * running at an upstream (a `processing` task with no lease whose `runAfter` has come, the
   * earliest first; its attempts do not change), else a queued task to start, moved to `processing`
   * with one more attempt: fairly between the keys that have queued tasks (each key's tasks take
   * turns with the others'; a key's own tasks in the order they were submitted; G85).
   */
  claimNext(providers: readonly string[], workerId: string, now: number, leaseUntil: number): Promise<TaskRecord | undefined>;

  /** Extends the lease while `workerId` still holds it on a processing task; false when lost. */
  renewLease(id: string, workerId: string, leaseUntil: number): Promise<boolean>;
  /** Records progress while `workerId` holds the lease; false when the lease is lost. */
  setProgress(id: string, workerId: string, progress: number): Promise<boolean>;
  /** Processing tasks whose lease ran out before `now`. */
  listLapsedLeases(now: number, limit: number): Promise<TaskRecord[]>;
  /** Finished tasks whose retention ended before `now`. */
  listExpired(now: number, limit: number): Promise<TaskRecord[]>;
  /** Queued tasks created before `createdBefore`, the oldest first: what the queue TTL expires (G249). */
  listQueuedBefore(createdBefore: number, limit: number): Promise<TaskRecord[]>;
  /** The earliest `runAfter` of a queued task or a waiting check of these providers, or undefined. */
  nextRunAfter(providers: readonly string[]): Promise<number | undefined>;
  /** Marks a finished task's retention as carried out (its files are gone; the task stays). */
  clearExpiry(id: string): Promise<void>;
  /** Forgets a task (retention). */
  delete(id: string): Promise<boolean>;
  /**
   * Queued and processing tasks counted by family, model and status, each group with its oldest
   * `createdAt`: what `/metrics` reports at scrape time (G223). Read through the in-flight index only.
   */
  liveCounts(): Promise<LiveTaskCount[]>;
  /** Queued and processing tasks of a key, counted up to `upTo` at most (the answer is min(count, upTo)). */
  countInFlight(ownerKeyId: string, upTo: number): Promise<number>;

  // -- change notification (long-poll) --
  /**
   * Calls `listener` with the id of each task this store instance writes (a store shared by several
   * processes also reports the others' writes); returns an unsubscribe. Synchronous.
   */
  watchChanges(listener: (id: string) => void): () => void;
  /**
   * Whether tasks may have been changed by another connection or process since the last call (cheap).
   * Optional: a store whose `watchChanges` already reports other processes' writes has no need of it.
   */
  changedElsewhere?(): boolean;
  /**
   * Optional (stores shared by several processes, G184): calls `listener` with a provider's id
   * whenever a task of that provider may be claimed now (queued or requeued, a check scheduled),
   * written by any process, and with `''` when such news may have been lost; returns an unsubscribe.
   * A worker wakes on it instead of waiting for its next poll.
   */
  watchQueue?(listener: (provider: string) => void): () => void;
  /**
   * Optional (stores shared by several processes, G184): calls `listener` with the id of each task
   * cancelled by any process; returns an unsubscribe. The worker running it stops at once.
   */
  watchCancels?(listener: (id: string) => void): () => void;
}
