/**
 * The provider adapter contract: the whole of it. Adapters translate a task into calls to a model
 * (or, for the sandbox, make the media themselves) and report the outcome. They never touch the
 * store or the queue; the task runner does that with what they return (G86-G95).
 *
 * A provider either makes the result at once (`start` answers `done`: the sandbox, synchronous
 * APIs) or starts a generation elsewhere (`start` answers `started` with a reference). The runner
 * saves that reference on the task before anything else happens, then calls `check` now and then
 * (each call from any worker of any process) until the generation ends, and `cancel` when the
 * caller cancels. Result files at an upstream are named as `RemoteFile`s: the runner downloads
 * them into the gateway's own storage at once.
 */
import type { Logger } from 'pino';
import type { ChatApi } from '../chat/types.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { FamilyId } from '../contract/families.js';
import type { FamilyRequest } from '../contract/family-request.js';
import type { MediaRef, MediaRefs } from '../contract/media-refs.js';
import type { OutputSpec } from '../contract/output.js';
import type { UpstreamRef } from '../contract/task-request.js';
import type { ProbeResult } from './probe-result.js';

export type { ProbeResult } from './probe-result.js';

/** What a provider is asked to make, besides the request of its family ({@link ProviderJob}). */
export interface JobFacts {
  taskId: string;
  /** The model the caller asked for. */
  model: string;
  /** The model's name at this provider (the route's `model`), else the caller's. */
  upstreamModel: string;
  /** The media the task must produce. */
  output: OutputSpec;
  /** Caller media by role (frames, references), with the field names to use in errors. */
  media: MediaRefs;
  /** 1 on the first try, 2 on the first retry, ... */
  attempt: number;
  /**
   * Which upstream generation of the task this is: 0 for the first, one more after each failed
   * generation. Creates send `Idempotency-Key: <taskId>` (generation 0) or `<taskId>.<generation>`,
   * so a create repeated after a crash is the same generation, and a new one after a failure is not.
   */
  generation: number;
}

/**
 * What a provider is asked to make: the task's `family`, `form` and `params` (the caller's
 * parameters as the family's plan stored them, validated, defaults applied: typed per family and
 * form, so narrowing by `job.family` types the fields, G405) and the {@link JobFacts}.
 */
export type ProviderJob = FamilyRequest & JobFacts;

/** A request as submitted, before a candidate of its route is chosen (a plan is one). */
export type UnroutedJob = FamilyRequest & Pick<JobFacts, 'model' | 'output' | 'media'>;

/** A request as submitted, before it is a task, with the candidate's model name: what {@link Provider.refuse} looks at. */
export type RequestedJob = UnroutedJob & Pick<JobFacts, 'upstreamModel'>;

/** Why a provider cannot honour a request: the field (as the caller named it) and the rule. */
export interface Refusal {
  /** The request field, e.g. `resolution`, `image_urls[1]`, `generate_audio`. */
  field: string;
  /** Names the value and why, e.g. `resolution 480p: Veo makes 720p or 1080p`. */
  message: string;
}

/** What every call to a provider is given: a start, a check, a cancel. */
export interface CallContext {
  /** Aborted on cancel, on shutdown, when the worker loses the task's lease, and at the call's time limit. */
  signal: AbortSignal;
  log: Logger;
  /** Reports progress 0-100 (monotonic; lower values are ignored). */
  reportProgress(progress: number): void;
  /**
   * A private scratch folder for this piece of work, removed afterwards. Made before a start; for a
   * check only its path is reserved (`mkdir(workDir, { recursive: true })` before writing there);
   * empty for a cancel.
   */
  workDir: string;
}

/** What a start is given besides: the caller's media, and where the upstream may notify the gateway (G396). */
export interface ProviderContext extends CallContext {
  /**
   * The bytes of a caller medium: the copy kept when it passed review at submit, else fetched
   * through the gateway's safe fetcher (public addresses only, bounded).
   */
  readMedia(ref: MediaRef, maxBytes: number): Promise<Buffer>;
  /**
   * A URL an upstream can fetch a caller medium from: the caller's URL as given, or, for an
   * uploaded asset (`assetId://`), a signed, expiring URL of the gateway's own copy.
   */
  mediaUrl(ref: MediaRef): string;
  /**
   * Where the upstream may notify this gateway that the generation ended (a provider with
   * `callbacks`, when the gateway accepts provider callbacks: G157); set for a start only. A
   * notice only brings the next check forward: polling goes on whether it comes or not.
   */
  callbackUrl?: string;
}

/** One produced file: bytes in memory, or a file the provider wrote (moved into storage). */
export type LocalFile =
  | { name: string; contentType: string; data: Buffer; width?: number; height?: number; duration?: number }
  | { name: string; contentType: string; path: string; width?: number; height?: number; duration?: number };

/** A result file at an upstream: downloaded into the gateway's storage at once, probed, then served by the gateway. */
export interface RemoteFile {
  url: string;
  /** What the file must be; anything else fails the task. */
  kind: 'image' | 'video' | 'audio';
  /** Headers the download needs (that upstream's credentials), sent to that URL's origin only. */
  headers?: Record<string, string>;
  /**
   * The URL is at the provider's own configured address (an upstream on the operator's network),
   * so the public-address rule of fetched URLs does not apply to that origin. Trust is per origin
   * and per hop (G270): a redirect off that origin is vetted like a caller's URL, and anything
   * else an upstream names must be public.
   */
  trusted?: boolean;
}

export type ProducedFile = LocalFile | RemoteFile;

export interface ProviderOutput {
  files: ProducedFile[];
  /** Seconds of the produced video where the provider knows them (re-hosted files are probed anyway). */
  actualDuration?: number;
}

/** A provider's `pollSeconds`: one number for every family, or per family (others keep the gateway's recommendation, tasks/check-delay.ts). */
export type PollSeconds = number | Partial<Record<FamilyId, number>>;

export type StartResult =
  /** Made already: the files are the result. */
  | { state: 'done'; output: ProviderOutput }
  /** Started elsewhere: check on it later. */
  | { state: 'started'; ref: UpstreamRef; progress?: number };

export type CheckResult =
  | { state: 'pending'; progress?: number /** The upstream asked for this long before the next check, ms. */; retryAfterMs?: number }
  | { state: 'completed'; output: ProviderOutput }
  /**
   * The generation ended without a result. An `UnrecoverableError` (the request was refused, the
   * content blocked) fails the task; any other error may start a new generation.
   */
  | { state: 'failed'; error: Error };

/** What a provider can serve: a media family's tasks, or chat completions. */
export type ServiceFamily = FamilyId | 'chat';

/** A notice an upstream sent to the gateway's callback route, as received (the body's raw bytes: signatures cover them). */
export interface CallbackDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * What a provider found of a callback delivery (G158). A valid one names the generation it is
 * about and an id of the delivery (the same for a repeat of it). A refused one says why: a header
 * missing or unreadable (`malformed`, naming it), signed too long ago or ahead (`stale`), or a
 * signature no key of the upstream's makes (`forged`).
 */
export type CallbackCheck =
  | { valid: true; upstreamId: string; deliveryId: string }
  | { valid: false; kind: 'malformed' | 'stale' | 'forged'; message: string; header?: string };

/** How a provider's upstream notifies the end of a generation (webhooks), and how the gateway checks a notice is the upstream's. */
export interface ProviderCallbacks {
  /**
   * Checks a delivery's signature and time before anything in its body is read. Throws a
   * ChannelError when the upstream's signing keys cannot be had now (the delivery is answered 503:
   * upstreams deliver again later).
   */
  verify(delivery: CallbackDelivery, now: number): Promise<CallbackCheck>;
}

export interface ProviderCapabilities {
  /** What this provider serves: media families (it has `start`) and/or `chat` (it has `chat`). */
  families: readonly ServiceFamily[];
}

export interface Provider {
  id: string;
  capabilities: ProviderCapabilities;
  /** Calls (starts, checks) this provider has in flight at once per process; the runner's default applies when absent. */
  concurrency?: number;
  /**
   * Seconds between checks of a started generation: one number, or per family (the others keep
   * the contract's recommended interval). Absent: the recommendation. The runner adds jitter and
   * backs off after failed checks (tasks/check-delay.ts).
   */
  pollSeconds?: PollSeconds;
  /**
   * Whether this provider can honour every field of the request for `job.upstreamModel` (its
   * declared mapping): a field it cannot translate is a {@link Refusal}, never silently dropped.
   * Asked at submit for each candidate of the route (those that refuse are left out of the task's
   * route; when all refuse, the first refusal is the caller's 400) and again before each start.
   * Absent: every request its families allow is honoured.
   */
  refuse?(job: RequestedJob): Refusal | undefined;
  /** Makes the result (the signal stops it) or starts a generation elsewhere. Required for media families. */
  start?(job: ProviderJob, ctx: ProviderContext): Promise<StartResult>;
  /**
   * One look at a started generation (one upstream call). Throwing means the look failed: the runner
   * looks again later; an {@link UnexpectedReply} a bounded number of times (G272), an
   * {@link UnrecoverableError} never (the generation can never be followed: the task fails, G464).
   */
  check?(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<CheckResult>;
  /**
   * A create repeated for the same generation is answered with that generation, never a second one
   * (the upstream honours `Idempotency-Key`, or the adapter finds the earlier one before creating).
   * Absent: a repeat makes (and bills) another generation there, so an answer to a create that
   * could not be read ({@link UnexpectedReply}) fails the task instead of being tried again (G453).
   */
  idempotentCreates?: boolean;
  /** Asks the upstream to stop a started generation (best effort). */
  cancel?(ref: UpstreamRef, job: ProviderJob, ctx: CallContext): Promise<void>;
  /**
   * A cheap check that the upstream answers with the configured key: a list or status call of its
   * API, never a generation (G323). Throws (ProbeFailed, ChannelError) when it does not.
   */
  probe?(signal: AbortSignal): Promise<ProbeResult>;
  /** Chat completions; required for `chat`. */
  chat?: ChatApi;
  /** Completion notices of its upstream (webhooks); `start` asks for them where `ctx.callbackUrl` is set. */
  callbacks?: ProviderCallbacks;
  /** Releases pooled connections at shutdown. */
  close?(): Promise<void>;
}

/** A provider of media families: one that has `start` (what the sandbox and media providers are). */
export type MediaProvider = Provider & Required<Pick<Provider, 'start'>>;

/**
 * A failure that retrying cannot fix (a bad prompt, a refused medium, an upstream 4xx caused by
 * the request). The task fails at once with this message, whatever attempts remain.
 */
export class UnrecoverableError extends Error {
  readonly param: string | undefined;

  constructor(message: string, options?: { cause?: unknown; param?: string }) {
    super(message, options);
    this.name = 'UnrecoverableError';
    this.param = options?.param;
  }
}

/**
 * The channel could not take the call (connection refused or reset, a timeout, 401/402/403: our
 * credentials or credit there, 429, 5xx): not the request's fault. A start or a chat call moves on
 * to the next candidate channel; a check is tried again later. `retryAfterMs`: what the upstream
 * asked for. As an AppError it is what a caller gets when no candidate is left (chat): by default
 * 502 `upstream_error`.
 */
export class ChannelError extends AppError {
  readonly retryAfterMs: number | undefined;
  /**
   * Whether it counts toward the channel's circuit (default true). False for an answer about one
   * task that still moves a create on (an earlier create of the same generation still being
   * answered there, G272).
   */
  readonly countsAgainstChannel: boolean;

  constructor(
    message: string,
    options: { cause?: unknown; retryAfterMs?: number; code?: ErrorCode; headers?: Record<string, string>; countsAgainstChannel?: boolean } = {},
  ) {
    super(options.code ?? 'upstream_error', message, {
      retryable: true,
      ...(options.cause !== undefined && { cause: options.cause }),
      ...(options.headers && { headers: options.headers }),
    });
    this.name = 'ChannelError';
    this.retryAfterMs = options.retryAfterMs;
    this.countsAgainstChannel = options.countsAgainstChannel ?? true;
  }

  /** A gateway error an upstream answer was mapped to, marked as the channel's fault. */
  static of(err: AppError, retryAfterMs?: number): ChannelError {
    return new ChannelError(err.message, {
      code: err.code,
      cause: err.cause ?? err,
      ...(err.headers && { headers: err.headers }),
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
}

/**
 * The upstream answered this task's call with something the gateway cannot use: malformed (not
 * JSON, fields missing, too large), a status the contract does not have, a refusal of one task's
 * status query. A problem of the one task's reply, not of the channel (G272): it never counts
 * toward the channel's circuit. At a check the same generation is checked again, a bounded number
 * of times ({@link MAX_REPLY_PROBLEMS}), then the task fails with this message; at a start it is a
 * failed attempt of the same generation (same `Idempotency-Key`) where the provider's creates are
 * idempotent ({@link Provider.idempotentCreates}), else the task fails: the upstream may have
 * started that generation, and a repeat would be a second one (G453).
 */
export class UnexpectedReply extends AppError {
  constructor(message: string) {
    super('upstream_error', message, { retryable: true });
    this.name = 'UnexpectedReply';
  }
}

/**
 * Checks in a row of one generation that may end in an {@link UnexpectedReply} before its task
 * fails (G272). With the checks backing off (2, 4, 8, 16 times the poll interval, at most 5 min),
 * five span about a minute for pictures and up to about ten minutes for video: long enough for a
 * reply garbled by a restart or a proxy page to pass, short against the attempt time limit (30 min).
 */
export const MAX_REPLY_PROBLEMS = 5;

/**
 * The upstream already holds another create under this generation's `Idempotency-Key` (a create
 * repeated after a crash whose body is no longer the first one's: an upload's URL signed in another
 * period, a changed public URL) and refuses every repeat under that key. Repeating the create can
 * never succeed, so the runner starts a new generation (a new key) while attempts remain (G126).
 */
export class GenerationKeyConflict extends AppError {
  constructor(message: string) {
    super('upstream_error', message, { retryable: true });
    this.name = 'GenerationKeyConflict';
  }
}
