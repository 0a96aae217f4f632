/**
 * The store contract. Routes and the task engine talk only to these interfaces; `sqlite/` is the
 * embedded implementation, picked by `create-store.ts` unless a PostgreSQL URL is configured.
 * Every method answers with a Promise (a networked database cannot answer synchronously; G176),
 * except `watchChanges`. Every implementation must pass the shared suite in
 * `test/cases/store-contract.case.ts`.
 */
import type { AuditAction } from '../contract/admin-audit.js';
import type { FamilyForm, FamilyId } from '../contract/families.js';
import type { TaskRequest } from '../contract/task-request.js';
import type { Logger } from 'pino';
import type { RateLimitBackend } from '../limits/backend.js';
import type { UpstreamRef } from '../contract/task-request.js';
import type { WebhookStore } from './webhook-types.js';

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
  insert(task: NewTask): Promise<TaskRecord>;
  /** Inserts several tasks in one transaction (group commit of concurrent submits): all or none. */
  insertMany(tasks: readonly NewTask[]): Promise<TaskRecord[]>;
  /**
   * Like `insertMany`, except that a task whose owner already has `maxInFlight` queued or processing
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
  updateIf(id: string, guard: TaskGuard, patch: TaskPatch, settle?: Settlement): Promise<TaskRecord | undefined>;
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
  countByStatus(): Promise<Record<TaskStatus, number>>;
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

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The account whose credits the key spends (G200). */
  accountId: string;
  /** First characters of the key, for recognising it in listings. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** Per-key rate limits (requests per second; bursts of twice that); null: the server's defaults. */
  submitRate?: number | null;
  queryRate?: number | null;
  /**
   * The key's own spending cap (G207): the most credits its tasks and chat requests may hold and
   * have been charged, in total, micro-credits; null or absent: none (the account's balance only).
   */
  spendCapMicro?: number | null;
  /** The operator's default webhook URL for the key's tasks (G208); null or absent: none. */
  webhookUrl?: string | null;
  /** `caller` (absent: caller) uses the public API; `admin` the admin API only (G300). */
  role?: KeyRole;
  /** The models the key may create tasks and chat with: names or `family:*` patterns (G304); null or absent: every model. */
  models?: readonly string[] | null;
  /** After this time (Unix ms) the key is refused with 401 `key_expired` (G305); null or absent: never. */
  expiresAt?: number | null;
  /** The key's own bound on its queued and processing tasks (G306); null or absent: `MEDIAGATE_MAX_TASKS_IN_FLIGHT`. */
  maxInFlight?: number | null;
  /**
   * When the key was last used (Unix ms, written at most once a minute per process, G308): answered by
   * `get` and `listPage` only (null: never); absent from the lookups that authenticate requests.
   */
  lastUsed?: number | null;
  /**
   * Set only on a key found by a secret a rotation replaced (G307): that secret is accepted until
   * this time (Unix ms), whatever the cache holding the record.
   */
  graceUntil?: number;
}

export type KeyRole = 'caller' | 'admin';

/** Fields `KeyStore.update` may change (null clears); absent fields stay as they are. */
export type KeyPatch = Partial<Pick<ApiKeyRecord, 'name' | 'models' | 'expiresAt' | 'submitRate' | 'queryRate' | 'spendCapMicro' | 'maxInFlight' | 'webhookUrl'>>;

/** What `KeyStore.listPage` reads: keys newest first (keyset pagination on (createdAt, id)). */
export interface KeyListQuery {
  accountId?: string;
  role?: KeyRole;
  revoked?: boolean;
  /** Only keys whose name contains this text (any case). */
  nameContains?: string;
  /** Only keys that sort after this position in (createdAt DESC, id DESC). */
  before?: { createdAt: number; id: string };
  limit: number;
}

export interface KeyStore {
  /**
   * Stores a key; with `account`, that new account (and its starting grant) in the same transaction,
   * and so `audit` (G302).
   */
  insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount, audit?: NewAuditEntry): Promise<void>;
  /**
   * The active (not revoked) key with this SHA-256 hash: its current secret's, or a secret a rotation
   * replaced (then with `graceUntil`, whether or not that time has passed: the caller decides, G307).
   * Expired keys are answered too (with `expiresAt`): the caller refuses them (G305).
   */
  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** The key with this id (revoked or not), with `lastUsed`. */
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** One page of keys, newest first, with `lastUsed` (G303). */
  listPage(query: KeyListQuery): Promise<ApiKeyRecord[]>;
  /** Changes a key (revoked or not) and writes `audit` in the same transaction; the key as changed, or undefined for an unknown id. */
  update(id: string, patch: KeyPatch, audit?: NewAuditEntry): Promise<ApiKeyRecord | undefined>;
  /**
   * A new secret for an active key (G307): its hash replaces the current one; the replaced one stays
   * valid until `graceUntil` (null: not at all). Secrets replaced earlier whose time is over are
   * forgotten. False when no active key has this id.
   */
  rotate(id: string, next: { hash: string; prefix: string }, graceUntil: number | null, now: number, audit?: NewAuditEntry): Promise<boolean>;
  /** Revokes the key with this id (and every secret of it, G307); false when no active key has it. */
  revoke(id: string, now: number, audit?: NewAuditEntry): Promise<boolean>;
  /** Moves keys' `lastUsed` forward to these times (Unix ms), never back (G308): one write for the batch. */
  recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void>;
  /** Sets (null: clears) a key's own rate limits; false when no key has this id. */
  setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean>;
  /** Sets (null: clears) a key's spending cap (G207), micro-credits; false when no key has this id. */
  setSpendCap(id: string, capMicro: number | null): Promise<boolean>;
  /** Sets (null: clears) a key's default webhook URL (G208); false when no key has this id. */
  setWebhookUrl(id: string, url: string | null): Promise<boolean>;
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

/** An account: it owns keys, and the credits its keys spend (G200). */
export interface AccountRecord {
  id: string;
  name: string;
  createdAt: number;
}

export interface NewAccount extends AccountRecord {
  /** Credited by a `grant` ledger entry when it is created (micro-credits; 0: none). */
  startingMicro: number;
}

/** An account's cached totals (micro-credits): `available` = grants + adjustments - captures - open holds. */
export interface AccountBalance extends AccountRecord {
  availableMicro: number;
  heldMicro: number;
  spentMicro: number;
}

export type LedgerKind = 'grant' | 'hold' | 'capture' | 'release' | 'adjust';

/**
 * One append-only ledger entry (micro-credits). `amountMicro`: granted (adjust: signed), held,
 * captured (charged) or released. A capture or release settles one hold: `settledMicro` is that
 * hold's amount (a capture below it gives the rest back).
 */
export interface LedgerEntry {
  id: number;
  accountId: string;
  /** The key whose task or chat request it concerns (holds and settlements). */
  keyId: string | null;
  kind: LedgerKind;
  amountMicro: number;
  settledMicro: number | null;
  taskId: string | null;
  /** The chat request, for chat holds and their settlement. */
  requestId: string | null;
  model: string | null;
  note: string | null;
  createdAt: number;
}

/** What `credits reconcile` finds wrong; all empty when the books are right. */
export interface ReconcileReport {
  accounts: number;
  entries: number;
  /** Keys whose cached held and spent totals (G207) differ from the ledger's. */
  keysMismatched: Array<{ keyId: string; cached: { heldMicro: number; spentMicro: number }; ledger: { heldMicro: number; spentMicro: number } }>;
  /** Accounts whose cached totals differ from the ledger's. */
  mismatched: Array<{ accountId: string; cached: Omit<AccountBalance, keyof AccountRecord>; ledger: Omit<AccountBalance, keyof AccountRecord> }>;
  /** Holds of finished tasks that were never settled. */
  unsettled: string[];
  /** Holds settled more than once, and settlements without a hold (task or request ids). */
  doubled: string[];
  /** Holds still open (tasks queued or processing, chat requests under way): not a mismatch. */
  open: number;
}

/** What `CreditStore.grant` did (G310). */
export type GrantOutcome =
  | { granted: true; entry: LedgerEntry; account: AccountBalance }
  | { granted: false; refused: 'no_account' }
  /** A negative amount larger than what the account has available: nothing held may be taken back. */
  | { granted: false; refused: 'below_held'; account: AccountBalance };

/** What `CreditStore.listAccountsPage` reads: accounts newest first (keyset pagination on (createdAt, id)). */
export interface AccountListQuery {
  /** Only accounts whose name contains this text (any case). */
  nameContains?: string;
  before?: { createdAt: number; id: string };
  limit: number;
}

/** What `CreditStore.ledgerPage` reads: one account's entries, newest first (keyset pagination on id). */
export interface LedgerQuery {
  accountId: string;
  kinds?: readonly LedgerKind[];
  /** Only entries with a smaller id: the last of the previous page. */
  beforeId?: number;
  limit: number;
}

/** Accounts and the ledger (G200-G205). */
export interface CreditStore {
  /** Creates an account (and its starting grant), and writes `audit` in the same transaction. */
  createAccount(account: NewAccount, audit?: NewAuditEntry): Promise<void>;
  getAccount(id: string): Promise<AccountBalance | undefined>;
  listAccounts(): Promise<AccountBalance[]>;
  /** One page of accounts, newest first (G309). */
  listAccountsPage(query: AccountListQuery): Promise<AccountBalance[]>;
  /**
   * A `grant` (or, for a negative amount, `adjust`) entry, with `audit` in the same transaction. A
   * negative amount may take back at most what the account has available (G310): checked and
   * written in one transaction, serialised with the account's holds.
   */
  grant(accountId: string, amountMicro: number, note: string, now: number, audit?: NewAuditEntry): Promise<GrantOutcome>;
  /** The account's entries, oldest first. */
  ledger(accountId: string): Promise<LedgerEntry[]>;
  /** One page of an account's entries, newest first (G309). */
  ledgerPage(query: LedgerQuery): Promise<LedgerEntry[]>;
  /**
   * Holds `amountMicro` for a chat request; with `enforce`, only if the account has that much
   * available and the key's spending cap allows it (checked and held in one transaction).
   */
  holdRequest(hold: { accountId: string; keyId: string; requestId: string; model: string; amountMicro: number; createdAt: number }, enforce: boolean): Promise<{ held: true } | HoldRefusal>;
  /** Settles a chat request's hold: captures `amountMicro` (at most the hold) and releases the rest; false when it was settled already. */
  settleRequest(requestId: string, amountMicro: number, now: number): Promise<boolean>;
  /**
   * Releases the holds of chat requests made before `before` that were never settled (their
   * process died mid-request); returns how many. A settlement racing it loses or wins as a whole.
   */
  releaseStaleRequests(before: number, now: number): Promise<number>;
  /** Captured credits per model since `since` (Unix ms). */
  usage(accountId: string, since: number): Promise<Array<{ model: string; settled: number; spentMicro: number }>>;
  /** Compares every account's cached totals with its ledger and checks each hold was settled at most once. */
  reconcile(): Promise<ReconcileReport>;
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

/** Long-poll slots of each key, counted wherever the store is shared. */
export interface WaitSlots {
  /**
   * Takes one of `max` slots of `keyId`, held until the release is called or, should this process
   * die, until `untilMs`; undefined when all `max` are held.
   */
  take(keyId: string, max: number, untilMs: number): Promise<(() => void) | undefined>;
}

/** What the admin API and the CLI changed (G302): append-only, written in the transaction of the change. */
export interface AuditEntry {
  id: number;
  /** Unix ms. */
  at: number;
  /** The admin key's id, `cli` (the `mediagate` command on the server) or `bootstrap` (a key from the settings at start). */
  actor: string;
  action: AuditAction;
  /** The id of the key or account changed. */
  target: string;
  /** The admin request's id (`x-request-id`); null for the CLI and the bootstrap. */
  requestId: string | null;
  /** What was asked, never a secret (no key, no hash). */
  details: Record<string, unknown>;
}

export type { AuditAction } from '../contract/admin-audit.js';

export type NewAuditEntry = Omit<AuditEntry, 'id'>;

/** What `AuditStore.list` reads: entries newest first (keyset pagination on id). */
export interface AuditQuery {
  actor?: string;
  action?: AuditAction;
  target?: string;
  /** Only entries at or after this time (Unix ms). */
  since?: number;
  /** Only entries before this time (Unix ms). */
  until?: number;
  beforeId?: number;
  limit: number;
}

/** The audit log (G302); its entries are written by the changes themselves (`audit` arguments). */
export interface AuditStore {
  list(query: AuditQuery): Promise<AuditEntry[]>;
}

export interface Store {
  tasks: TaskStore;
  idempotency: IdempotencyStore;
  keys: KeyStore;
  usage: UsageStore;
  assets: AssetStore;
  credits: CreditStore;
  /** Webhook secrets and the deliveries outbox (G208-G215). */
  webhooks: WebhookStore;
  /** What the admin API and the CLI changed (G302). */
  audit: AuditStore;
  /**
   * Optional (stores shared by several processes, G184): runs `fn` unless another process is running
   * the job of this name, so a periodic job runs once across all processes; false when skipped.
   */
  runAlone?(name: string, fn: () => Promise<void>): Promise<boolean>;
  /**
   * Optional (stores shared by several processes, G196): rate-limit counts kept in the store, so a
   * key's budget holds across every process using it.
   */
  rateLimits?(logger?: Logger): RateLimitBackend;
  /** Optional (stores shared by several processes, G197): long-poll slots per key counted across processes. */
  waitSlots?: WaitSlots;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  /** A consistent copy of the database at `file`, taken while the gateway runs. Optional: the embedded store only. */
  backup?(file: string): Promise<void>;
  close(): Promise<void>;
}
