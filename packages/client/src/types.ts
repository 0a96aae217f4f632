/**
 * Request and reply shapes of a mediagate gateway (the interface its docs/reference/api/ describes), written
 * by hand so this package needs nothing at run time. The gateway's tests check that every request
 * type here is accepted by the server's own schemas (test/unit/client-types.test.ts).
 */

export type TaskStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
export type Family = 'pic' | 'clip' | 'reel' | 'motion' | 'videos' | 'model-center';
/** `duration`/`seconds` take an integer or a string of digits. */
export type IntegerLike = number | string;

/**
 * Every create takes `callback_url`: where the gateway POSTs the task's query body, signed, when it
 * ends (a per-key default applies when absent; null opts the task out).
 */
export interface CallbackParams {
  callback_url?: string | null;
}

export type PicModel = 'pic' | 'pic-pro' | 'pic-pro-stable' | 'pic-2-stable' | 'pic-2';
export type PicSize = '1:1' | '16:9' | '9:16' | '4:3' | '3:4' | '3:2' | '2:3' | '5:4' | '4:5' | '21:9';
export interface PicCreateParams extends CallbackParams {
  model: PicModel;
  prompt: string;
  resolution?: '1k' | '2k' | '4k';
  size?: PicSize;
  image_urls?: string[];
}

export type ClipModel = 'clip3.1-fast' | 'clip_3_1_fast_stable' | 'clip_3_1_pro_stable' | 'clip_3_1_fast' | 'clip_3_1_pro';
export interface ClipCreateParams extends CallbackParams {
  model?: ClipModel;
  prompt: string;
  size?: '1280x720' | '720x1280';
  aspect_ratio?: '16:9' | '9:16';
  /** Form B only; case-insensitive. */
  resolution?: '720p' | '720P' | '1080p' | '1080P' | '4K' | '4k';
  duration?: IntegerLike;
  seconds?: IntegerLike;
  input_reference?: string[];
  image_urls?: string[];
  first_image?: string;
  last_image?: string;
}

export type ReelModel = 'reel-2' | 'reel-2-stable' | 'reel-2-pro' | 'reelOa2Plus' | 'reelOa2Pro' | 'reelOa2' | 'reelOa2Stable' | 'reel2Stable';
export interface ReelCreateParams extends CallbackParams {
  model: ReelModel;
  prompt: string;
  size?: '720x1280' | '1280x720';
  aspect_ratio?: '16:9' | '9:16';
  duration?: IntegerLike;
  seconds?: IntegerLike;
  input_reference?: string[];
  image_urls?: string[];
}

export type MotionModel =
  | 'motion_1_5_pro_480p'
  | 'motion_1_5_pro_720p'
  | 'motion_1_5_pro_1080p'
  | 'motion_2_0_4s_5s'
  | 'motion_2_0_6s_10s'
  | 'motion_2_0_11s_15s'
  | 'motion_2_0'
  | 'motion_2_0_fast'
  | 'motion_2_0_pro'
  | 'motion_2_0_fast_pro';
export type MotionContent =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string }; role?: 'first_frame' | 'last_frame' | 'reference_image' };
export interface MotionCreateParams extends CallbackParams {
  model: MotionModel;
  content: MotionContent[];
  ratio?: '16:9' | '4:3' | '1:1' | '3:4' | '9:16' | '21:9' | 'adaptive';
  duration?: IntegerLike;
  generate_audio?: boolean;
  service_tier?: 'default' | 'flex';
}

export interface VideosCreateParams extends CallbackParams {
  model: 'videos' | 'videos_fast';
  prompt: string;
  duration: IntegerLike;
  ratio?: '16:9' | '9:16';
  resolution?: '720p';
  image?: string;
  lastFrameImage?: string;
  referenceImages?: string[];
  referenceVideos?: string[];
}

/** A Model Center submit: `model` (a Model ID) plus that model's parameters; unknown fields go to the provider. */
export interface ModelCenterCreateParams extends CallbackParams {
  model: string;
  prompt: string;
  image_urls?: string[];
  reference_images?: string[];
  reference_videos?: string[];
  reference_audios?: string[];
  first_image?: string[];
  last_image?: string[];
  duration?: IntegerLike;
  resolution?: string;
  aspect_ratio?: string;
  generate_audio?: boolean;
  [field: string]: unknown;
}

interface TaskBase {
  id: string;
  object: string;
  /** Unix seconds. */
  created: number;
  model: string;
  status: TaskStatus;
  /** 0-100. */
  progress: number;
  error: string | null;
  /**
   * Query replies (and task list items): `upstream_unavailable` while the task waits queued because
   * no upstream provider of its model takes requests now (it fails after the gateway's
   * `MEDIAGATE_UNAVAILABLE_FAIL_SECONDS` of that); null otherwise. Absent from create replies.
   */
  queue_reason?: 'upstream_unavailable' | null;
}
export interface PicTask extends TaskBase {
  object: 'image' | 'image.generation';
  image_url?: string | null;
}
export interface VideoTask extends TaskBase {
  video_url?: string | null;
  actualDuration?: number | null;
}
export interface ModelCenterTask extends TaskBase {
  object: 'image' | 'video';
  result_url: string | null;
  image_url?: string | null;
  video_url?: string | null;
  amount: number;
  actualDuration: number | null;
}
/** Any query reply (any query path answers for any task of the caller, shaped by its family). */
export type AnyTask = PicTask | VideoTask | ModelCenterTask;

/** `POST /v1/videos/videos` answers an envelope; its `data.projectId` is the task id. */
export interface VideosCreateReply {
  code: string;
  msg: string | null;
  data: { projectId: string };
}

export interface TaskListParams {
  /** One status, or several (any of them). */
  status?: TaskStatus | TaskStatus[];
  /** One family, or several (any of them). */
  family?: Family | Family[];
  model?: string;
  /** Tasks created strictly after: Unix seconds, or an ISO-8601 date-time with a time zone. */
  created_after?: number | string;
  limit?: number;
  cursor?: string;
}
/** A page of tasks, newest first (`T`: the family's task shape when listed through a family). */
export interface TaskList<T extends AnyTask = AnyTask> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** `GET /v1/webhooks/secret` and `POST /v1/webhooks/secret/rotate`. */
export interface WebhookSecret {
  key: string;
}
/** `GET /v1/tasks/{id}/deliveries`: the webhook deliveries of a task (times in Unix seconds). */
export interface DeliveryList {
  object: 'list';
  data: Array<{
    id: string;
    url: string;
    status: 'pending' | 'delivered' | 'failed';
    attempts: Array<{ at: number; status_code: number | null; error: string | null; duration_ms: number }>;
    next_attempt_at: number | null;
  }>;
}

/** `POST /v2/model-center/assets` and `GET .../assets/{id}`: an uploaded medium as review found it; use it as `assetId://{id}`. */
export interface Asset {
  id: string;
  object: 'asset';
  /** Only an approved asset is usable; a rejected one says why in `reason`, and nothing of it is kept. */
  status: 'approved' | 'rejected';
  reason: string | null;
  kind: 'image' | 'video' | 'audio' | null;
  format: string | null;
  width: number | null;
  height: number | null;
  /** Seconds (video, audio). */
  duration: number | null;
  bytes: number;
  /** Unix seconds. */
  created: number;
  /** When the asset is removed, Unix seconds. */
  expires_at: number;
}
/** `DELETE /v2/model-center/assets/{id}`. */
export interface AssetDeleted {
  id: string;
  object: 'asset';
  deleted: true;
}

/** `GET /v1/account`: the calling key's account; amounts in credits. */
export interface Account {
  account: { id: string; name: string };
  balance: number;
  held: number;
  spent: number;
  /** Per model over the period: tasks and chat requests settled, and what they were charged. */
  usage: Array<{ model: string; settled: number; spent: number }>;
  period: { since: number; days: number };
}

export type ChatModel = 'chat-3-flash-preview' | 'chat-2.5-flash-lite' | 'chat-2.5-flash' | 'chat-3.1-pro-preview' | 'chat-3-pro-preview' | 'chat-2.5-pro';
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ChatContentPart[];
}
export interface ChatParams {
  model: ChatModel;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  max_completion_tokens?: number;
  stop?: string | string[] | null;
  presence_penalty?: number;
  frequency_penalty?: number;
}
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
export type FinishReason = 'stop' | 'length';
export interface ChatCompletion {
  code: string;
  msg: string;
  data: { content: string; usage: ChatUsage; model: string; id: string; finish_reason: FinishReason };
  success: boolean;
}
export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: number; delta: { role?: 'assistant'; content?: string }; finish_reason: FinishReason | null }>;
  usage?: ChatUsage;
}

/** Error bodies (D9): the standard one, and the envelopes of `videos` create and chat. */
export interface StandardErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
export interface EnvelopeErrorBody {
  code: string;
  msg: string;
  data: null;
  success?: false;
}
export type ErrorBody = StandardErrorBody | EnvelopeErrorBody;
