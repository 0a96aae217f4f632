/**
 * The store contract. Routes and the task engine talk only to these interfaces; `sqlite/` is the
 * embedded implementation, picked by `create-store.ts` unless a PostgreSQL URL is configured.
 * Every method answers with a Promise (a networked database cannot answer synchronously; G176),
 * except `watchChanges`. Every implementation must pass the shared suite in
 * `test/cases/store-contract.case.ts`. One file per part (G394): tasks, keys, usage, credits,
 * assets, Idempotency-Keys, audit, webhooks, worker heartbeats, the operator's reads, console sessions; this file holds the whole (`Store`) and names them all.
 */
import type { Logger } from 'pino';
import type { RateLimitBackend } from '../limits/backend.js';
import type { AdminStore } from './admin-types.js';
import type { AssetStore } from './asset-types.js';
import type { AuditStore } from './audit-types.js';
import type { CreditStore } from './credit-types.js';
import type { IdempotencyStore } from './idempotency-types.js';
import type { KeyStore } from './key-types.js';
import type { TaskStore } from './task-types.js';
import type { SessionStore } from './session-types.js';
import type { UsageStore } from './usage-types.js';
import type { WorkerStore } from './worker-types.js';
import type { WebhookStore } from './webhook-types.js';

export * from './admin-types.js';
export * from './asset-types.js';
export * from './audit-types.js';
export * from './credit-types.js';
export * from './idempotency-types.js';
export * from './key-types.js';
export * from './task-types.js';
export * from './session-types.js';
export * from './usage-types.js';
export * from './worker-types.js';

/** Long-poll slots of each key, counted wherever the store is shared. */
export interface WaitSlots {
  /**
   * Takes one of `max` slots of `keyId`, held until the release is called or, should this process
   * die, until `untilMs`; undefined when all `max` are held.
   */
  take(keyId: string, max: number, untilMs: number): Promise<(() => void) | undefined>;
}

export interface Store {
  tasks: TaskStore;
  /** Heartbeats of the processes that run tasks (G264). */
  workers: WorkerStore;
  idempotency: IdempotencyStore;
  keys: KeyStore;
  usage: UsageStore;
  assets: AssetStore;
  credits: CreditStore;
  /** Webhook secrets and the deliveries outbox (G208-G215). */
  webhooks: WebhookStore;
  /** What the admin API and the CLI changed (G302). */
  audit: AuditStore;
  /** The operator's cross-tenant reads, usage aggregates and channel figures (G317-G324). */
  admin: AdminStore;
  /** The web console's sign-in sessions (G361), shared by every process of the store. */
  sessions: SessionStore;
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
  /**
   * Optional (networked stores, G259): when a connection of this store last failed (Unix ms, 0:
   * never), idle ones included: the lapsed-lease sweep holds back for a lease period after it.
   */
  lastFaultAt?(): number;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  /** A consistent copy of the database at `file`, taken while the gateway runs. Optional: the embedded store only. */
  backup?(file: string): Promise<void>;
  close(): Promise<void>;
}
