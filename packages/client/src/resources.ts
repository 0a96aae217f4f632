import { call, type HttpOptions } from './http.js';
import { waitForTask, type WaitOptions } from './wait.js';
import type {
  AnyTask,
  ClipCreateParams,
  ModelCenterCreateParams,
  ModelCenterTask,
  MotionCreateParams,
  PicCreateParams,
  PicTask,
  Family,
  ReelCreateParams,
  TaskList,
  TaskListParams,
  VideosCreateParams,
  VideosCreateReply,
  VideoTask,
  DeliveryList,
  WebhookSecret,
} from './types.js';
import { verifyWebhook } from './webhooks.js';

export interface Urls {
  base: string;
  power: string;
  api: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Sent as `Idempotency-Key`: a create retried with the same key and body creates one task (24 h). */
  idempotencyKey?: string;
}

/** Recommended polling intervals (docs/reference/api/README.md#retention-and-polling, lower ends), ms. */
export const POLL_INTERVAL_MS = { pic: 2_000, clip: 30_000, reel: 30_000, motion: 30_000, videos: 30_000, 'model-center': 5_000 } as const;

const enc = encodeURIComponent;
const REEL_FORM_A: readonly string[] = ['reel-2', 'reel-2-stable', 'reel-2-pro', 'reel2Stable'];

function requestOptions(options: RequestOptions) {
  return {
    ...(options.signal && { signal: options.signal }),
    ...(options.idempotencyKey !== undefined && { headers: { 'idempotency-key': options.idempotencyKey } }),
  };
}

/** `GET {base_url}/v1/tasks` with `params`: one page of the caller's tasks, newest first. */
function listTasks<T extends AnyTask>(http: HttpOptions, base: string, params: TaskListParams, signal: AbortSignal | undefined): Promise<TaskList<T>> {
  const query = new URLSearchParams();
  // lists are comma-separated (`status=queued,processing`)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, Array.isArray(value) ? value.join(',') : String(value));
  const qs = query.toString();
  return call<TaskList<T>>(http, `${base}/v1/tasks${qs ? `?${qs}` : ''}`, signal ? { signal } : {});
}

/** One family: create, get (the family's query path), list (the family's tasks), waitFor. */
export class TaskResource<Params, Created, Task extends AnyTask> {
  constructor(
    protected readonly http: HttpOptions,
    private readonly createUrl: (params: Params) => string,
    protected readonly queryUrl: (id: string) => string,
    private readonly intervalMs: number,
    private readonly family: Family,
    private readonly baseUrl: () => string,
  ) {}

  /** One page of the caller's tasks of this family, newest first (`GET /v1/tasks?family=...`). */
  list(params: Omit<TaskListParams, 'family'> = {}, options: { signal?: AbortSignal } = {}): Promise<TaskList<Task>> {
    return listTasks<Task>(this.http, this.baseUrl(), { ...params, family: this.family }, options.signal);
  }

  create(params: Params, options: RequestOptions = {}): Promise<Created> {
    return call<Created>(this.http, this.createUrl(params), { method: 'POST', body: params, ...requestOptions(options) });
  }

  get(id: string, options: { signal?: AbortSignal } = {}): Promise<Task> {
    return call<Task>(this.http, this.queryUrl(id), options.signal ? { signal: options.signal } : {});
  }

  /** Follows the task to its end (long-poll `?wait=`); see {@link waitForTask}. */
  waitFor(id: string, options: WaitOptions = {}): Promise<Task & { status: 'completed' }> {
    return waitForTask<Task>(this.http, this.queryUrl(id), this.intervalMs, options);
  }
}

/** motion also has cancel: `POST {power_base_url}/v1/motion/videos/{id}/cancel`. */
export class MotionResource extends TaskResource<MotionCreateParams, VideoTask, VideoTask> {
  constructor(
    http: HttpOptions,
    private readonly urls: () => Urls,
  ) {
    super(
      http,
      () => `${urls().power}/v1/motion/videos`,
      (id) => `${urls().power}/v1/result/${enc(id)}`,
      POLL_INTERVAL_MS.motion,
      'motion',
      () => urls().base,
    );
  }

  /** Cancels a queued or processing task; answers it (`status: "cancelled"`). A finished task: ConflictError. */
  cancel(id: string, options: { signal?: AbortSignal } = {}): Promise<VideoTask> {
    return call<VideoTask>(this.http, `${this.urls().power}/v1/motion/videos/${enc(id)}/cancel`, { method: 'POST', ...options });
  }
}

/** Any task of the caller, whatever its family: `GET /v1/tasks` and `GET /v1/result/{id}`. */
export class TasksResource {
  constructor(
    private readonly http: HttpOptions,
    private readonly urls: () => Urls,
  ) {}

  /** One page, newest first. */
  list(params: TaskListParams = {}, options: { signal?: AbortSignal } = {}): Promise<TaskList> {
    return listTasks(this.http, this.urls().base, params, options.signal);
  }

  /** Every task matching `params`, page after page (following `next_cursor`). */
  async *iterate(params: Omit<TaskListParams, 'cursor'> = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<AnyTask, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.list({ ...params, ...(cursor !== undefined && { cursor }) }, options);
      yield* page.data;
      if (!page.has_more || page.next_cursor === null) return;
      cursor = page.next_cursor;
    }
  }

  get(id: string, options: { signal?: AbortSignal } = {}): Promise<AnyTask> {
    return call<AnyTask>(this.http, this.resultUrl(id), options.signal ? { signal: options.signal } : {});
  }

  /** The webhook deliveries of a task: `GET {base_url}/v1/tasks/{id}/deliveries`. */
  deliveries(id: string, options: { signal?: AbortSignal } = {}): Promise<DeliveryList> {
    return call<DeliveryList>(this.http, `${this.urls().base}/v1/tasks/${enc(id)}/deliveries`, options.signal ? { signal: options.signal } : {});
  }

  /**
   * Follows any task to its end. The default interval follows what the first reply shows: an
   * image task 2 s, a Model Center task (it has `result_url`) 5 s, a video task 30 s.
   */
  waitFor(id: string, options: WaitOptions = {}): Promise<AnyTask & { status: 'completed' }> {
    // the interval follows the first reply, which is the wait's own first query (under timeoutMs)
    return waitForTask<AnyTask>(this.http, this.resultUrl(id), intervalOf, options);
  }

  private resultUrl(id: string): string {
    return `${this.urls().base}/v1/result/${enc(id)}`;
  }
}

/** The key's webhook signing secret, and checking deliveries signed with it. */
export class WebhooksResource {
  /** Checks a delivery's signature: see {@link verifyWebhook}. */
  readonly verify = verifyWebhook;

  constructor(
    private readonly http: HttpOptions,
    private readonly urls: () => Urls,
  ) {}

  /** `GET {base_url}/v1/webhooks/secret`: `{ key: "whsec_..." }` (made on first use). */
  secret(options: { signal?: AbortSignal } = {}): Promise<WebhookSecret> {
    return call<WebhookSecret>(this.http, `${this.urls().base}/v1/webhooks/secret`, options.signal ? { signal: options.signal } : {});
  }

  /** `POST {base_url}/v1/webhooks/secret/rotate`: a new secret (the previous one still signs for 24 h). */
  rotateSecret(options: { signal?: AbortSignal } = {}): Promise<WebhookSecret> {
    return call<WebhookSecret>(this.http, `${this.urls().base}/v1/webhooks/secret/rotate`, { method: 'POST', ...options });
  }
}

function intervalOf(task: AnyTask): number {
  if ('result_url' in task) return POLL_INTERVAL_MS['model-center'];
  return task.object.startsWith('image') ? POLL_INTERVAL_MS.pic : POLL_INTERVAL_MS.clip;
}

export function familyResources(http: HttpOptions, urls: () => Urls) {
  const base = (path: string) => () => `${urls().base}${path}`;
  const home = (): string => urls().base;
  // Form A of clip and reel is created on {api_base_url}, Form B on {base_url} (endpoints 4 and 6).
  const clipUrl = (p: ClipCreateParams): string => `${p.model === undefined || p.model === 'clip3.1-fast' ? urls().api : urls().base}/clip/videos`;
  const reelUrl = (p: ReelCreateParams): string => `${REEL_FORM_A.includes(p.model) ? urls().api : urls().base}/reel/videos`;
  const result = (id: string): string => `${urls().base}/v1/result/${enc(id)}`;
  return {
    /** `POST {base_url}/v1/pic/images`, `GET {base_url}/v1/result/{id}`. */
    pic: new TaskResource<PicCreateParams, PicTask, PicTask>(http, base('/v1/pic/images'), result, POLL_INTERVAL_MS.pic, 'pic', home),
    /** `POST {api_base_url}/clip/videos` (Form A) or `{base_url}/clip/videos` (Form B), `GET {base_url}/v1/result/{id}`. */
    clip: new TaskResource<ClipCreateParams, VideoTask, VideoTask>(http, clipUrl, result, POLL_INTERVAL_MS.clip, 'clip', home),
    /** `POST {api_base_url}/reel/videos` (Form A) or `{base_url}/reel/videos` (Form B), `GET {api_base_url}/v1/videos/{id}`. */
    reel: new TaskResource<ReelCreateParams, VideoTask, VideoTask>(
      http,
      reelUrl,
      (id) => `${urls().api}/v1/videos/${enc(id)}`,
      POLL_INTERVAL_MS.reel,
      'reel',
      home,
    ),
    motion: new MotionResource(http, urls),
    /** `POST {base_url}/v1/videos/videos` (answers `{code, msg, data: {projectId}}`), `GET {base_url}/v1/result/{projectId}`. */
    videos: new TaskResource<VideosCreateParams, VideosCreateReply, VideoTask>(
      http,
      base('/v1/videos/videos'),
      result,
      POLL_INTERVAL_MS.videos,
      'videos',
      home,
    ),
    /** `POST {base_url}/v2/model-center/tasks`, `GET {base_url}/v2/model-center/tasks/{id}`. */
    modelCenter: new TaskResource<ModelCenterCreateParams, ModelCenterTask, ModelCenterTask>(
      http,
      base('/v2/model-center/tasks'),
      (id) => `${urls().base}/v2/model-center/tasks/${enc(id)}`,
      POLL_INTERVAL_MS['model-center'],
      'model-center',
      home,
    ),
  };
}
