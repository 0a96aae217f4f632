/**
 * The store contract. Routes and the task engine talk only to these interfaces; `sqlite/` is the
 * embedded implementation, picked by `create-store.ts` unless a PostgreSQL URL is configured.
 * Every method answers with a Promise (a networked database cannot answer synchronously; G176),
 * except `watchChanges`. Every implementation must pass the shared suite in
 * `test/store-contract.case.ts`.
 */
import type { FamilyForm, FamilyId } from '../contract/families.js';
import type { TaskRequest } from '../contract/submit-plan.js';
import type { UpstreamRef } from '../providers/types.js';

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

/** A task's generations at an upstream (docs/API.md G86). */
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
}

export type NewTask = Pick<TaskRecord, 'id' | 'ownerKeyId' | 'family' | 'form' | 'model' | 'provider' | 'request' | 'amount' | 'createdAt'> & {
  /** The Idempotency-Key claim of the request that created it (`idempotencyTaskKey`), committed with the task. */
  idempotencyKey?: string;
};

/** Fields a state change may set together with the new status. */
export type TaskPatch = Partial<Pick<TaskRecord,
  'attempts' | 'serverFaults' | 'status' | 'progress' | 'result' | 'error' | 'startedAt' | 'finishedAt' | 'leaseOwner' | 'leaseExpiresAt' | 'runAfter' | 'expiresAt' | 'provider' | 'upstream'>>;

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

export interface TaskStore {
  insert(task: NewTask): Promise<TaskRecord>;
  /** Inserts several tasks in one transaction (group commit of concurrent submits): all or none. */
  insertMany(tasks: readonly NewTask[]): Promise<TaskRecord[]>;
  /**
   * The task only if the active (not revoked) key with this SHA-256 hash owns it: the poll path's
   * one query for authentication and lookup together.
   */
  getOwnedByKeyHash(id: string, keyHash: string): Promise<TaskRecord | undefined>;
  get(id: string): Promise<TaskRecord | undefined>;
  /** The task only if `ownerKeyId` owns it (tenant isolation lives in the query). */
  getOwned(id: string, ownerKeyId: string): Promise<TaskRecord | undefined>;

  // -- used only by tasks/states.ts: every status change is one conditional update --
  /** Applies `patch` iff the guard holds; returns the updated row, or undefined when it did not. */
  updateIf(id: string, guard: TaskGuard, patch: TaskPatch): Promise<TaskRecord | undefined>;
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
  /** The earliest `runAfter` of a queued task or a waiting check of these providers, or undefined. */
  nextRunAfter(providers: readonly string[]): Promise<number | undefined>;
  /** Marks a finished task's retention as carried out (its files are gone; the task stays). */
  clearExpiry(id: string): Promise<void>;
  /** Forgets a task (retention). */
  delete(id: string): Promise<boolean>;
  countByStatus(): Promise<Record<TaskStatus, number>>;
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

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** First characters of the key, for recognising it in listings. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** Per-key rate limits (requests per second; bursts of twice that); null: the server's defaults. */
  submitRate?: number | null;
  queryRate?: number | null;
}

export interface KeyStore {
  insert(key: ApiKeyRecord & { hash: string }): Promise<void>;
  /** The active (not revoked) key with this SHA-256 hash. */
  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes the key with this id; false when no active key has it. */
  revoke(id: string, now: number): Promise<boolean>;
  /** Sets (null: clears) a key's own rate limits; false when no key has this id. */
  setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean>;
}

/** One chat completion's token usage, billed to the key that asked. */
export interface ChatUsageRecord {
  keyId: string;
  model: string;
  requestId: string;
  promptTokens: number;
  completionTokens: number;
  createdAt: number;
}

export interface UsageStore {
  recordChatUsage(usage: ChatUsageRecord): Promise<void>;
  /** Token totals of a key per model, optionally since a time (Unix ms). */
  chatUsageByKey(keyId: string, since?: number): Promise<Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>>;
}

/** An uploaded medium that passed (or failed) review, usable as `assetId://{id}` by its owner. */
export interface AssetRecord {
  id: string;
  ownerKeyId: string;
  status: 'approved' | 'rejected';
  /** Why review rejected it, or null. */
  reason: string | null;
  kind: 'image' | 'video' | 'audio' | null;
  /** `png`, `mp4`, `wav`, ... as probed; null when unreadable. */
  format: string | null;
  width: number | null;
  height: number | null;
  /** Seconds (video, audio). */
  duration: number | null;
  fps: number | null;
  bytes: number;
  /** File name in the asset's folder; null for a rejected asset (nothing is kept). */
  file: string | null;
  /** Unix ms. */
  createdAt: number;
  expiresAt: number;
}

export interface AssetStore {
  /**
   * Inserts the asset unless its owner's approved, unexpired assets plus this one would exceed
   * `quotaBytes` (checked and inserted in one transaction); false when over quota.
   */
  insertWithinQuota(asset: AssetRecord, quotaBytes: number, now: number): Promise<boolean>;
  /** The asset only if `ownerKeyId` owns it. */
  getOwned(id: string, ownerKeyId: string): Promise<AssetRecord | undefined>;
  /** Assets whose retention ended before `now`. */
  listExpired(now: number, limit: number): Promise<AssetRecord[]>;
  delete(id: string): Promise<boolean>;
}

/** How a task names the Idempotency-Key claim that created it: API key, Idempotency-Key and when it was claimed. */
export const idempotencyTaskKey = (keyId: string, idemKey: string, claimedAt: number): string => `${keyId}:${claimedAt}:${idemKey}`;

/** What `IdempotencyStore.begin` found for a key. */
export type IdempotencyBegin =
  | { state: 'new' }
  | { state: 'replay'; statusCode: number; response: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' }
  /** The claim's request died after its task was committed: that task, to answer with. */
  | { state: 'recovered'; taskId: string };

/** Idempotency-Key records, scoped to the API key that sent them. */
export interface IdempotencyStore {
  /**
   * Claims `idemKey` for a request with this fingerprint, in one transaction: a stored response
   * of the same fingerprint is replayed, another fingerprint is a mismatch, a claim younger than
   * `staleBefore` is in progress; a record older than `expiredBefore` counts as absent. A stale
   * claim whose task was committed (tasks carry their `idempotencyKey`) is `recovered`.
   */
  begin(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number, expiredBefore: number): Promise<IdempotencyBegin>;
  /** Stores the response of a claimed key. */
  complete(keyId: string, idemKey: string, statusCode: number, response: string): Promise<void>;
  /** Drops a claim whose request did not succeed, so the key can be used again. */
  abandon(keyId: string, idemKey: string): Promise<void>;
  /** Deletes records created before `before`; returns how many. */
  purge(before: number): Promise<number>;
}

export interface Store {
  tasks: TaskStore;
  idempotency: IdempotencyStore;
  keys: KeyStore;
  usage: UsageStore;
  assets: AssetStore;
  /**
   * Optional (stores shared by several processes, G184): runs `fn` unless another process is running
   * the job of this name, so a periodic job runs once across all processes; false when skipped.
   */
  runAlone?(name: string, fn: () => Promise<void>): Promise<boolean>;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  /** A consistent copy of the database at `file`, taken while the gateway runs. Optional: the embedded store only. */
  backup?(file: string): Promise<void>;
  close(): Promise<void>;
}
