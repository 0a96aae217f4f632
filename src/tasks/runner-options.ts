/** What the task runner is given (main/gateway.ts builds it); task-work.ts reads it too. */
import type { Logger } from 'pino';
import type { MediaRef } from '../contract/media-refs.js';
import type { BlobStore } from '../media/blob-store.js';
import type { Channels } from '../providers/channels.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { TaskStore } from '../store/types.js';
import type { ResultStorage } from './result-storage.js';

export interface RunnerOptions {
  store: TaskStore;
  providers: ProviderRegistry;
  /** The channels calls go through (concurrency per channel, circuit breakers). */
  channels: Channels;
  /** Stores what providers made: local files moved, remote ones downloaded and probed. */
  results: ResultStorage;
  log: Logger;
  /** Scratch space for provider work folders. */
  tmpDir: string;
  concurrency: number;
  maxAttempts: number;
  leaseMs: number;
  videosResultTtlHours: number;
  /** Fetches a caller URL the task holds no reviewed copy of (the safe fetcher). */
  fetchMedia: (url: string, field: string, maxBytes: number, signal: AbortSignal) => Promise<Buffer>;
  /** A URL an upstream can fetch a caller medium from (the caller's own URL, or a signed URL of the gateway's copy). */
  mediaUrl: (taskId: string, ref: MediaRef) => string;
  /** Where a provider's upstream may notify the end of a task's generation (G157); undefined: nowhere (polling only). */
  callbackUrl?: (providerId: string, taskId: string) => string | undefined;
  /** `<data>/inputs`: the reviewed copies of caller media (media/media-review.ts); removed once the task is finished. */
  inputs?: BlobStore;
  /** Longest one generation may take (made here or at an upstream); then it is stopped and counts as a retryable failure (default 30 min). */
  attemptTimeoutMs?: number;
  /** How long a task may wait because no channel of its route takes calls before it fails, ms (default 30 min, G274). */
  unavailableFailMs?: number;
  /** How often to look for work from other processes, due retries and due checks. */
  pollMs?: number;
  /** The first retry's delay before jitter, ms (default RETRY_BASE_MS, 1 s; tests shorten it: G278). */
  retryBaseMs?: number;
  /** The gateway's own resources (disk, descriptors): nothing is claimed while one is short (G84). */
  resources?: { check(): { ok: boolean; problems: string[] } };
  /**
   * Runs a periodic job unless another process of a shared store runs it now (Store.runAlone): the
   * lapsed-lease sweep then runs in one process at a time across the cluster (G184).
   */
  runAlone?: (name: string, fn: () => Promise<void>) => Promise<boolean>;
  /** When a connection of the store last failed, idle ones included (Store.lastFaultAt, G259). */
  storeFaultAt?: () => number;
}
