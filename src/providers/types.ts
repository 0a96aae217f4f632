/**
 * The provider adapter contract: the whole of it. Adapters translate a task into a call to a model
 * (or, for the sandbox, make the media themselves) and report the outcome. They never touch the
 * store or the queue; the task runner does that with what they return.
 */
import type { Logger } from 'pino';
import type { FamilyForm, FamilyId } from '../contract/families.js';
import type { MediaRef, MediaRefs } from '../contract/media-refs.js';
import type { OutputSpec } from '../contract/output.js';

/** What a provider is asked to make. */
export interface ProviderJob {
  taskId: string;
  family: FamilyId;
  form: FamilyForm;
  model: string;
  /** Validated caller parameters, defaults applied. */
  params: Record<string, unknown>;
  /** The media the task must produce. */
  output: OutputSpec;
  /** Caller media by role (frames, references), with the field names to use in errors. */
  media: MediaRefs;
  /** 1 on the first try, 2 on the first retry, ... */
  attempt: number;
}

export interface ProviderContext {
  /** Aborted on cancel, on shutdown and when the worker loses the task's lease. */
  signal: AbortSignal;
  log: Logger;
  /** Reports progress 0-100 (monotonic; lower values are ignored). */
  reportProgress(progress: number): void;
  /**
   * The bytes of a caller medium: the copy kept when it passed review at submit, else fetched
   * through the gateway's safe fetcher (public addresses only, bounded).
   */
  readMedia(ref: MediaRef, maxBytes: number): Promise<Buffer>;
  /** A private scratch folder for this attempt, removed afterwards. */
  workDir: string;
  /** Provider credentials from configuration, if any. */
  credentials: Record<string, string>;
}

/** One produced file: bytes in memory, or a file the provider wrote (moved into storage). */
export type ProducedFile =
  | { name: string; contentType: string; data: Buffer; width?: number; height?: number; duration?: number }
  | { name: string; contentType: string; path: string; width?: number; height?: number; duration?: number };

export interface ProviderOutput {
  files: ProducedFile[];
  actualDuration?: number;
  upstreamUrls?: string[];
}

export interface ProviderCapabilities {
  /** Families whose tasks this provider can run. */
  families: readonly FamilyId[];
  /** Whether `cancel` can stop a running generation. */
  cancel: boolean;
}

export interface Provider {
  id: string;
  capabilities: ProviderCapabilities;
  /** Tasks this provider runs at once per process; the runner's default applies when absent. */
  concurrency?: number;
  /** Runs the job to completion (the signal stops it) and returns what was made. */
  submit(job: ProviderJob, ctx: ProviderContext): Promise<ProviderOutput>;
  /** Asks the provider to stop a generation it is running elsewhere (upstreams); optional. */
  cancel?(job: ProviderJob, ctx: ProviderContext): Promise<void>;
}

/**
 * A failure that retrying cannot fix (a bad prompt, a refused medium). The task fails at once with
 * this message, whatever attempts remain. Any other error is retried with backoff.
 */
export class UnrecoverableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}
